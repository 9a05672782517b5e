//! `adaptive` on a scene that changes (growth, explosion, settling, kind changes): its pairs
//! and events equal brute force's at every step, whatever it switches to.

use std::collections::BTreeSet;

use broadphase::adaptive::{AdaptiveOptions, SwitchPolicy};
use broadphase::{Adaptive, BroadPhase, BruteForce, PairEvents, ProxyId};
use broadphase_sim::{Scene, World, WorldProxies};

/// One broad phase fed by the world.
struct Driven {
    bp: Box<dyn BroadPhase>,
    proxies: WorldProxies,
    events: PairEvents,
}

impl Driven {
    fn new(mut bp: Box<dyn BroadPhase>, world: &World) -> Self {
        let proxies = WorldProxies::insert_all(world, bp.as_mut()).unwrap();
        Self {
            bp,
            proxies,
            events: PairEvents::new(),
        }
    }

    fn step(&mut self, world: &World) {
        self.proxies.sync(world, self.bp.as_mut()).unwrap();
        self.bp.update(&mut self.events);
    }

    /// Pairs and this step's events as object pairs, independent of proxy ids.
    fn snapshot(&self) -> [BTreeSet<(usize, usize)>; 3] {
        let object = |id: ProxyId| self.proxies.object(id) as usize;
        let objects = |pairs: &mut dyn Iterator<Item = (ProxyId, ProxyId)>| {
            pairs
                .map(|(a, b)| {
                    let (a, b) = (object(a), object(b));
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
        switching.bp.diagnostics().switches.len() >= 20,
        "{:?}",
        switching.bp.diagnostics().switches.len()
    );
}
