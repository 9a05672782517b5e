//! A running discrete scene: the world, its proxies in one broad phase, the narrow phase,
//! and each step's time split as the workbench measures it.

use std::time::Instant;

use bytes::BytesMut;

use broadphase::{AlgorithmOptions, PairEvents, ProxyKind, ALGORITHMS};
use broadphase_sim::{narrow_phase::shapes_intersect, Scene, World, WorldProxies};
use rustc_hash::FxHashMap;

use crate::algorithm::Running;
use crate::frame::{self, StepHeader};
use crate::overlay::{self, Overlay};

/// The time of one step's three parts, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepTimes {
    /// Handing the moved boxes to the broad phase (`WorldProxies::sync`: `set_aabbs` and the
    /// churn).
    pub hand: f64,
    /// `BroadPhase::update`.
    pub update: f64,
    /// Reading the pairs and testing the shapes of those with a moved object.
    pub narrow: f64,
}

/// A scene running in one broad phase. The same scene and seed give the same boxes at every
/// step whatever the algorithm, and every algorithm reports the same pairs (the library's
/// guarantee), so two sessions that differ only in algorithm agree at every step.
pub struct Session {
    scene: Scene,
    algorithm: String,
    world: World,
    running: Running,
    proxies: WorldProxies,
    contacts: Contacts,
    events: PairEvents,
    step: u32,
    times: StepTimes,
    /// The pairs as of the last update, by proxy slot, those in contact first.
    pairs: Vec<[u32; 2]>,
    contact_count: usize,
    /// Overlay settings: whether the structure is drawn, and to what tree depth.
    structure: bool,
    depth: u32,
    // Scratch reused by every frame.
    frame_index: Vec<u32>,
    boxes: Vec<[f32; 6]>,
    flags: Vec<u8>,
    frame_pairs: Vec<[u32; 2]>,
    apart: Vec<[u32; 2]>,
    overlay: Overlay,
    scratch: overlay::Scratch,
}

impl Session {
    /// Places the scene's objects and inserts them into `algorithm`.
    pub fn new(scene: Scene, algorithm: &str) -> anyhow::Result<Self> {
        let world = World::new(&scene)?;
        let mut running = Running::new(algorithm, &AlgorithmOptions::default())?;
        let proxies = WorldProxies::insert_all(&world, running.get_mut())?;
        let mut session = Self {
            scene,
            algorithm: algorithm.to_string(),
            world,
            running,
            proxies,
            contacts: Contacts::default(),
            events: PairEvents::new(),
            step: 0,
            times: StepTimes::default(),
            pairs: Vec::new(),
            contact_count: 0,
            structure: false,
            depth: 4,
            frame_index: Vec::new(),
            boxes: Vec::new(),
            flags: Vec::new(),
            frame_pairs: Vec::new(),
            apart: Vec::new(),
            overlay: Overlay::default(),
            scratch: overlay::Scratch::default(),
        };
        session.running.get_mut().update(&mut session.events);
        session.narrow_phase();
        Ok(session)
    }

    /// Advances one step and times its parts as the workbench's `measure` does: the world's
    /// motion is not timed; handing the boxes over, the update, and the narrow phase are.
    pub fn step(&mut self) -> anyhow::Result<()> {
        self.world.step();
        let start = Instant::now();
        self.proxies.sync(&self.world, self.running.get_mut())?;
        let moved = Instant::now();
        self.running.get_mut().update(&mut self.events);
        let updated = Instant::now();
        self.narrow_phase();
        let narrowed = Instant::now();
        self.step += 1;
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
        self.times = StepTimes {
            hand: ms(start, moved),
            update: ms(moved, updated),
            narrow: ms(updated, narrowed),
        };
        Ok(())
    }

    /// Reads the pair set and tests each pair's shapes, keeping `pairs` with those in
    /// contact first.
    fn narrow_phase(&mut self) {
        self.contacts.begin(&self.world);
        let bp = self.running.get();
        let table = bp.proxies();
        self.pairs.clear();
        self.apart.clear();
        for (a, b) in bp.pair_set().iter() {
            let object = |slot: u32| self.proxies.object(table.id(slot as usize));
            if self.contacts.test(&self.world, object(a), object(b)) {
                self.pairs.push([a, b]);
            } else {
                self.apart.push([a, b]);
            }
        }
        self.contacts.end();
        self.contact_count = self.pairs.len();
        self.pairs.extend_from_slice(&self.apart);
    }

    /// Steps run since the start.
    pub fn step_count(&self) -> u32 {
        self.step
    }

    /// The last step's times.
    pub fn times(&self) -> StepTimes {
        self.times
    }

    /// Pairs reported by the broad phase at the last step.
    pub fn pair_count(&self) -> usize {
        self.pairs.len()
    }

    /// Pairs whose shapes touch at the last step.
    pub fn contact_count(&self) -> usize {
        self.contact_count
    }

    /// The scene as configured (objects and speed included).
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// The algorithm's name.
    pub fn algorithm(&self) -> &str {
        &self.algorithm
    }

    /// The broad phase, by family.
    pub fn running(&self) -> &Running {
        &self.running
    }

    /// The phase under way, for phased scenes.
    pub fn phase(&self) -> Option<usize> {
        self.world.phase()
    }

    /// Whether the structure is drawn, and to what depth.
    pub fn overlay_settings(&self) -> (bool, u32) {
        (self.structure, self.depth)
    }

    /// Sets what the frames draw besides the boxes.
    pub fn set_overlay(&mut self, structure: bool, depth: u32) {
        self.structure = structure;
        self.depth = depth.min(overlay::MAX_DEPTH);
    }

    /// The frame of the current state ([`crate::frame`]), written into `out` (cleared).
    pub fn frame(&mut self, out: &mut BytesMut) {
        let bp = self.running.get();
        let table = bp.proxies();
        self.frame_index.clear();
        self.frame_index.resize(table.slot_count(), u32::MAX);
        self.boxes.clear();
        self.flags.clear();
        for slot in table.live_slots() {
            self.frame_index[slot] = self.boxes.len() as u32;
            let aabb = table.aabb(slot);
            let (min, max) = (aabb.min(), aabb.max());
            self.boxes.push([min.x, min.y, min.z, max.x, max.y, max.z]);
            let kind = if table.kind(slot) == ProxyKind::Static {
                frame::FLAG_STATIC
            } else {
                0
            };
            self.flags.push(kind);
        }
        self.frame_pairs.clear();
        for (i, &[a, b]) in self.pairs.iter().enumerate() {
            let state = if i < self.contact_count {
                frame::FLAG_CONTACT | frame::FLAG_OVERLAP
            } else {
                frame::FLAG_OVERLAP
            };
            let (a, b) = (self.frame_index[a as usize], self.frame_index[b as usize]);
            self.flags[a as usize] |= state;
            self.flags[b as usize] |= state;
            self.frame_pairs.push([a, b]);
        }
        self.overlay.clear();
        if self.structure {
            overlay::structure(
                &self.running,
                self.depth,
                &mut self.scratch,
                &mut self.overlay,
            );
        }
        let active = self.running.active_name();
        let header = StepHeader {
            step: self.step,
            contacts: self.contact_count as u32,
            phase: self.world.phase().map(|p| p as u32),
            active: ALGORITHMS
                .iter()
                .position(|&n| n == active)
                .map(|i| i as u32),
            switches: bp.diagnostics().switches.len() as u32,
            times: self.times,
            side: self.world.side(),
        };
        frame::encode_step(
            out,
            &header,
            &self.boxes,
            &self.flags,
            &self.frame_pairs,
            &self.overlay,
        );
    }
}

/// The narrow phase's results per object pair, reused while neither object moves: a
/// physics engine keeps the contacts of resting bodies, and so does the workbench
/// (`narrow_phase::ContactCache`), whose cost the viewer's narrow-phase time matches.
#[derive(Debug, Default)]
struct Contacts {
    /// Per object pair (smaller first): the result and the step that last saw it.
    results: FxHashMap<(u32, u32), (bool, u64)>,
    moved: Vec<bool>,
    calls: u64,
    seen: usize,
}

impl Contacts {
    /// Marks the objects the world's last step moved.
    fn begin(&mut self, world: &World) {
        self.calls += 1;
        self.seen = 0;
        self.moved.clear();
        self.moved.resize(world.len(), false);
        for &i in world
            .moving()
            .iter()
            .chain(world.spawned())
            .chain(world.respawned())
            .chain(world.kind_changed())
        {
            self.moved[i as usize] = true;
        }
    }

    /// Whether the shapes of objects `a` and `b` touch.
    fn test(&mut self, world: &World, a: u32, b: u32) -> bool {
        self.seen += 1;
        let key = (a.min(b), a.max(b));
        let moved = self.moved[a as usize] || self.moved[b as usize];
        let calls = self.calls;
        match self.results.get_mut(&key) {
            Some(entry) if !moved => {
                entry.1 = calls;
                entry.0
            }
            _ => {
                let hit = shapes_intersect(world, a as usize, b as usize);
                self.results.insert(key, (hit, calls));
                hit
            }
        }
    }

    /// Forgets pairs no longer reported, now and then (amortised O(1) per pair).
    fn end(&mut self) {
        if self.results.len() > 2 * self.seen + 1024 {
            let calls = self.calls;
            self.results.retain(|_, (_, last)| *last == calls);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use broadphase_sim::narrow_phase::count_collisions;

    fn scene(objects: usize) -> Scene {
        Scene {
            objects,
            ..Scene::default()
        }
    }

    #[test]
    fn every_algorithm_reports_the_same_pairs_at_every_step() {
        let mut sessions: Vec<Session> = ALGORITHMS
            .iter()
            .map(|name| Session::new(scene(300), name).unwrap())
            .collect();
        for _ in 0..15 {
            let mut counts = Vec::new();
            for session in &mut sessions {
                session.step().unwrap();
                counts.push((session.pair_count(), session.contact_count()));
            }
            assert!(counts.windows(2).all(|w| w[0] == w[1]), "{counts:?}");
        }
    }

    #[test]
    fn a_phased_scene_reports_its_phase_and_adaptive_its_algorithm() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scenes/calm-burst-settle.toml"
        );
        let mut builder = broadphase_sim::SceneBuilder::from_file(path.as_ref()).unwrap();
        builder.set("objects", "300").unwrap();
        let mut session = Session::new(builder.build().unwrap(), "adaptive").unwrap();
        // The first phase starts after the scene's warm-up steps.
        for _ in 0..=session.scene().warmup {
            session.step().unwrap();
        }
        assert_eq!(session.phase(), Some(0));
        let mut out = BytesMut::new();
        session.frame(&mut out);
        let header = frame::decode_step(&out).unwrap().header;
        assert_eq!(header.phase, Some(0));
        let active = ALGORITHMS[header.active.unwrap() as usize];
        assert_ne!(active, "adaptive");
    }

    #[test]
    fn contacts_match_the_workbench_count() {
        let mut session = Session::new(scene(400), "sap").unwrap();
        for _ in 0..10 {
            session.step().unwrap();
            let table = session.running.get().proxies();
            let objects = session.pairs.iter().map(|&[a, b]| {
                let object = |s: u32| session.proxies.object(table.id(s as usize));
                (object(a), object(b))
            });
            let expected = count_collisions(&session.world, objects);
            assert_eq!(session.contact_count(), expected);
        }
    }
}
