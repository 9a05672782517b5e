//! The scene TOML parser and the motion of the scenes it accepts: arbitrary bytes never panic,
//! every error is one line, the two parsing routes agree, and a valid scene (capped small)
//! builds a `World` whose boxes feed a broad phase that agrees with brute force.
#![no_main]

use broadphase::{create, AlgorithmOptions, BroadPhase, Pair, PairEvents};
use broadphase_sim::{
    narrow_phase::count_collisions, Scene, SceneBuilder, SceneError, World, WorldProxies,
};
use libfuzzer_sys::fuzz_target;

/// Caps applied (as overrides) before a valid scene is built into a world, so that one input
/// runs in milliseconds.
const CAPS: [(&str, usize); 4] = [
    ("objects", 64),
    ("terrain_boxes", 16),
    ("steps", 6),
    ("warmup", 2),
];

fn one_line(e: &SceneError) {
    let text = e.to_string();
    assert!(
        !text.contains('\n') && !text.contains('\r'),
        "multi-line error: {text:?}"
    );
    assert!(!text.is_empty());
}

fn parse(text: &str) {
    let direct = Scene::from_toml_str(text, "fuzz.toml");
    let built = SceneBuilder::from_toml_str(text, "fuzz.toml").and_then(|b| {
        let scene = b.build();
        if let Err(e) = &scene {
            one_line(e);
        }
        scene.map(|s| (b, s))
    });
    if let Err(e) = &direct {
        one_line(e);
    }
    if let Err(e) = &built {
        one_line(e);
    }
    // Both routes parse the same text with the same rules.
    match (&direct, &built) {
        (Ok(a), Ok((_, b))) => assert_eq!(a, b, "the two parsing routes disagree"),
        (Err(_), Err(_)) => {}
        (a, b) => panic!(
            "routes disagree: direct {:?}, builder {:?}",
            a.as_ref().err(),
            b.as_ref().err()
        ),
    }
    let Ok((mut builder, scene)) = built else {
        return;
    };
    // The record of a run parses back to the same scene.
    let again = Scene::from_toml_str(&scene.to_toml(), "record.toml")
        .unwrap_or_else(|e| panic!("to_toml does not parse back: {e}"));
    assert_eq!(again, scene, "to_toml round trip");
    for (field, cap) in CAPS {
        let value = match field {
            "objects" => scene.objects,
            "terrain_boxes" => scene.terrain_boxes,
            "steps" => scene.steps,
            _ => scene.warmup,
        };
        if value > cap {
            builder
                .set(field, &cap.to_string())
                .expect("a small count is a valid override");
        }
    }
    let mut scene = match builder.build() {
        Ok(scene) => scene,
        Err(e) => {
            // Fewer objects can make a density-sized world too small: a typed error.
            one_line(&e);
            return;
        }
    };
    // Phases: at most four, of at most three steps and 64 objects each.
    scene.phases.truncate(4);
    for phase in &mut scene.phases {
        phase.steps = phase.steps.min(3);
        phase.objects = phase.objects.map(|n| n.min(64));
    }
    scene.steps = scene.measured_steps();
    if let Err(e) = scene.validate() {
        one_line(&e);
        return;
    }
    let mut world = match World::new(&scene) {
        Ok(world) => world,
        Err(e) => {
            one_line(&e);
            return;
        }
    };
    simulate(&scene, &mut world);
}

/// Steps the world, keeping a grid and brute force in sync with its boxes; their pair sets
/// must be equal after every update, and the narrow phase must run on them.
fn simulate(scene: &Scene, world: &mut World) {
    let options = AlgorithmOptions::default();
    let mut phases: Vec<Box<dyn BroadPhase>> = ["brute-force", "sort-and-sweep", "grid"]
        .iter()
        .map(|name| create(name, &options).expect("registered"))
        .collect();
    let mut proxies: Vec<WorldProxies> = phases
        .iter_mut()
        .map(|phase| WorldProxies::insert_all(world, phase.as_mut()).expect("valid boxes"))
        .collect();
    let steps = scene.warmup + scene.steps;
    let mut events = PairEvents::default();
    let mut raw: Vec<Pair> = Vec::new();
    for _ in 0..steps {
        world.step();
        for (phase, proxies) in phases.iter_mut().zip(&mut proxies) {
            // Spawns, despawns, respawns, kind changes and moves.
            proxies
                .sync(world, phase.as_mut())
                .expect("live proxies, valid boxes");
            phase.update(&mut events);
        }
        let mut pairs_of = |phase: &dyn BroadPhase, proxies: &WorldProxies| {
            phase.pairs(&mut raw);
            let mut pairs: Vec<(u32, u32)> = raw
                .iter()
                .map(|p| {
                    let (a, b) = (proxies.object(p.a), proxies.object(p.b));
                    (a.min(b), a.max(b))
                })
                .collect();
            pairs.sort_unstable();
            pairs
        };
        let expected = pairs_of(phases[0].as_ref(), &proxies[0]);
        for (phase, proxies) in phases.iter().zip(&proxies).skip(1) {
            assert_eq!(
                pairs_of(phase.as_ref(), proxies),
                expected,
                "{} differs from brute force",
                phase.name()
            );
        }
        let collisions = count_collisions(world, expected.iter().copied());
        assert!(collisions <= expected.len());
    }
}

fuzz_target!(|data: &[u8]| {
    // Raw bytes when they are UTF-8 (what a file read would accept), else the lossy text.
    match std::str::from_utf8(data) {
        Ok(text) => parse(text),
        Err(_) => parse(&String::from_utf8_lossy(data)),
    }
});
