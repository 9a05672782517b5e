//! `adaptive` on a scene that changes (growth, explosion, settling, kind changes): its pairs
//! and events equal brute force's at every step, whatever it switches to.

use std::collections::BTreeSet;

use broadphase::{
    Adaptive, AdaptiveOptions, BroadPhase, BruteForce, CollisionFilter, PairEvents, ProxyId,
    SwitchPolicy,
};
use broadphase_sim::{Scene, World};

/// One broad phase fed by the world, with its ids per object.
struct Driven {
    bp: Box<dyn BroadPhase>,
    ids: Vec<Option<ProxyId>>,
    events: PairEvents,
}

impl Driven {
    fn new(bp: Box<dyn BroadPhase>, world: &World) -> Self {
        let mut driven = Self {
            bp,
            ids: Vec::new(),
            events: PairEvents::new(),
        };
        for i in 0..world.len() {
            driven.insert(world, i);
        }
        driven
    }

    fn insert(&mut self, world: &World, i: usize) {
        if self.ids.len() <= i {
            self.ids.resize(i + 1, None);
        }
        if let Some(old) = self.ids[i].take() {
            self.bp.remove(old).unwrap();
        }
        let id = self
            .bp
            .insert(world.aabbs()[i], world.kind(i), CollisionFilter::ALL)
            .unwrap();
        self.ids[i] = Some(id);
    }

    fn step(&mut self, world: &World) {
        for &i in world.despawned() {
            let id = self.ids[i as usize].take().unwrap();
            self.bp.remove(id).unwrap();
        }
        for &i in world
            .respawned()
            .iter()
            .chain(world.kind_changed())
            .chain(world.spawned())
        {
            self.insert(world, i as usize);
        }
        for &i in world.moving() {
            let id = self.ids[i as usize].unwrap();
            self.bp.set_aabb(id, world.aabbs()[i as usize]).unwrap();
        }
        self.bp.update(&mut self.events);
    }

    /// Pairs and this step's events as object pairs, independent of proxy ids.
    fn snapshot(&self) -> [BTreeSet<(usize, usize)>; 3] {
        let object = |id: ProxyId| self.ids.iter().position(|&x| x == Some(id));
        let objects = |pairs: &mut dyn Iterator<Item = (ProxyId, ProxyId)>| {
            pairs
                .map(|(a, b)| {
                    let (a, b) = (
                        object(a).unwrap_or(usize::MAX),
                        object(b).unwrap_or(usize::MAX),
                    );
                    (a.min(b), a.max(b))
                })
                .collect::<BTreeSet<_>>()
        };
        let mut pairs = Vec::new();
        self.bp.pairs(&mut pairs);
        [
            objects(&mut pairs.iter().map(|p| (p.a, p.b))),
            objects(&mut self.events.begun.iter().map(|p| (p.a, p.b))),
            // Ended pairs may name removed proxies: count them only.
            (0..self.events.ended.len()).map(|k| (k, k)).collect(),
        ]
    }
}

#[test]
fn adaptive_matches_brute_force_through_every_phase() {
    let scene = Scene::from_toml_str(
        "objects = 120\nwarmup = 2\nsleep_speed = 2.0\nremove_rate = 0.02\n\
         [[phases]]\nsteps = 40\nobjects = 300\nmean_speed = 2.0\n\
         [[phases]]\nsteps = 30\nmean_speed = 80.0\nexplode = true\nstationary_fraction = 0.3\n\
         [[phases]]\nsteps = 120\nmean_speed = 0.0\ngravity = 40.0\nobjects = 200\nstationary_fraction = 0.0\n",
        "test",
    )
    .unwrap();
    let mut world = World::new(&scene).unwrap();
    let round_robin = AdaptiveOptions {
        policy: SwitchPolicy::RoundRobin,
        min_trial_interval: 5,
        max_trial_interval: 5,
        ..Default::default()
    };
    let mut reference = Driven::new(Box::new(BruteForce::new()), &world);
    let mut measured = Driven::new(Box::new(Adaptive::new(Default::default()).unwrap()), &world);
    let mut switching = Driven::new(Box::new(Adaptive::new(round_robin).unwrap()), &world);
    for step in 0..scene.warmup + scene.steps {
        world.step();
        reference.step(&world);
        measured.step(&world);
        switching.step(&world);
        let expected = reference.snapshot();
        assert_eq!(
            measured.snapshot(),
            expected,
            "measured policy, step {step}"
        );
        assert_eq!(switching.snapshot(), expected, "round robin, step {step}");
    }
    assert!(
        switching.bp.switch_log().len() >= 20,
        "{:?}",
        switching.bp.switch_log().len()
    );
}
