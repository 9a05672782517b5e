//! Motion: determinism, bounds, gravity, bounces, phases and sleep.

use super::*;

fn scene() -> Scene {
    Scene {
        objects: 300,
        mean_speed: 50.0,
        stationary_fraction: 0.2,
        sphere_bounces: true,
        remove_rate: 0.01,
        teleport_rate: 0.01,
        terrain_boxes: 10,
        gravity: 9.8,
        ..Default::default()
    }
}

#[test]
fn same_seed_same_motion_other_seed_other_motion() {
    let mut a = World::new(&scene()).unwrap();
    let mut b = World::new(&scene()).unwrap();
    let mut c = World::new(&Scene { seed: 2, ..scene() }).unwrap();
    for _ in 0..100 {
        a.step();
        b.step();
        c.step();
        assert_eq!(a.aabbs(), b.aabbs());
        assert_eq!(a.respawned(), b.respawned());
    }
    assert_ne!(a.aabbs(), c.aabbs());
}

#[test]
fn objects_stay_in_the_world_and_statics_never_move() {
    let s = scene();
    let mut w = World::new(&s).unwrap();
    assert_eq!(w.len(), 300 + 10 + 1);
    let statics: Vec<usize> = (0..w.len())
        .filter(|&i| w.kind(i) == ProxyKind::Static)
        .collect();
    assert_eq!(statics.len(), 60 + 10 + 1);
    assert_eq!(w.moving().len(), 240);
    let before: Vec<Aabb> = statics.iter().map(|&i| w.aabbs()[i]).collect();
    let world = Aabb::new(Vec3::splat(-1e-3), Vec3::splat(w.side() + 1e-3)).unwrap();
    let mut respawns = 0;
    for _ in 0..200 {
        w.step();
        respawns += w.respawned().len();
        for &i in w.moving() {
            assert!(world.contains(&w.aabbs()[i as usize]));
        }
    }
    assert!(respawns > 0);
    let after: Vec<Aabb> = statics.iter().map(|&i| w.aabbs()[i]).collect();
    assert_eq!(before, after);
}

#[test]
fn gravity_settles_objects_into_a_layer() {
    let s = Scene {
        objects: 200,
        gravity: 20.0,
        mean_speed: 1.0,
        ..Default::default()
    };
    let mut w = World::new(&s).unwrap();
    for _ in 0..600 {
        w.step();
    }
    let mean_height: f32 = w
        .moving()
        .iter()
        .map(|&i| w.aabbs()[i as usize].min().y)
        .sum::<f32>()
        / w.moving().len() as f32;
    assert!(
        mean_height < 0.1 * w.side(),
        "mean height {mean_height}, side {}",
        w.side()
    );
}

#[test]
fn sphere_bounces_conserve_momentum_of_equal_spheres() {
    let s = Scene {
        objects: 2,
        shapes: "sphere".into(),
        size_distribution: crate::SizeDistribution::Fixed,
        world_size: Some(100.0),
        sphere_bounces: true,
        redraw_interval: 0,
        ..Default::default()
    };
    let mut w = World::new(&s).unwrap();
    w.centers[0] = Vec3::new(50.0, 50.0, 50.0);
    w.centers[1] = Vec3::new(51.0, 50.0, 50.0);
    w.velocities[0] = Vec3::new(1.0, 0.0, 0.0);
    w.velocities[1] = Vec3::new(-1.0, 0.0, 0.0);
    w.step();
    assert!(w.velocities[0].x < 0.0 && w.velocities[1].x > 0.0);
    assert!((w.velocities[0] + w.velocities[1]).length() < 1e-5);
}

fn phased(text: &str) -> Scene {
    Scene::from_toml_str(text, "test.toml").unwrap()
}

/// Follows the world's spawn, despawn and kind lists like a broad phase would, and
/// checks they describe exactly the live objects and their kinds.
#[test]
fn phases_grow_shrink_and_change_kinds_consistently() {
    let scene = phased(
        "objects = 200\nwarmup = 3\nremove_rate = 0.01\n\
         [[phases]]\nsteps = 20\nobjects = 600\nstationary_fraction = 0.5\n\
         [[phases]]\nsteps = 10\nobjects = 150\n\
         [[phases]]\nsteps = 5\nstationary_fraction = 0.0\n",
    );
    let mut w = World::new(&scene).unwrap();
    let mut live: Vec<Option<ProxyKind>> = (0..w.len()).map(|i| Some(w.kind(i))).collect();
    let mut counts = Vec::new();
    for step in 0..scene.warmup + scene.steps {
        w.step();
        live.resize(w.len(), None);
        for &i in w.despawned() {
            assert!(live[i as usize].take().is_some(), "despawned twice: {i}");
        }
        for &i in w.spawned() {
            assert!(live[i as usize].is_none(), "spawned twice: {i}");
            live[i as usize] = Some(w.kind(i as usize));
        }
        for &i in w.kind_changed() {
            live[i as usize] = Some(w.kind(i as usize));
        }
        for (i, mirrored) in live.iter().enumerate() {
            assert_eq!(mirrored.is_some(), w.is_alive(i), "object {i}, step {step}");
            if let Some(kind) = mirrored {
                assert_eq!(*kind, w.kind(i), "object {i}, step {step}");
            }
        }
        for &i in w.moving() {
            assert!(w.is_alive(i as usize) && w.kind(i as usize) == ProxyKind::Dynamic);
        }
        counts.push(live.iter().filter(|k| k.is_some()).count());
    }
    // Steady growth to 600, then down to 150, each phase ending on its count.
    assert_eq!(counts[scene.warmup + 19], 600);
    assert_eq!(counts[scene.warmup + 29], 150);
    assert!(counts[scene.warmup + 5] > 200 && counts[scene.warmup + 5] < 600);
    assert_eq!(w.live_count(), 150);
    // The last phase made every object move.
    assert_eq!(w.moving().len(), 150);
}

#[test]
fn objects_fall_asleep_on_the_ground_and_a_phase_wakes_them() {
    let resting = phased(
        "objects = 100\nwarmup = 0\nsleep_speed = 2.0\nmean_speed = 0.0\ngravity = 30.0\n\
         [[phases]]\nsteps = 400\n",
    );
    let mut w = World::new(&resting).unwrap();
    for _ in 0..400 {
        w.step();
    }
    assert_eq!(w.moving().len(), 0, "everything rests after 400 steps");
    let scene = phased(
        "objects = 100\nwarmup = 0\nsleep_speed = 2.0\nmean_speed = 0.0\ngravity = 30.0\n\
         [[phases]]\nsteps = 400\n\
         [[phases]]\nsteps = 2\nmean_speed = 20.0\ngravity = 0.0\nexplode = true\n",
    );
    let mut w = World::new(&scene).unwrap();
    for _ in 0..400 {
        w.step();
    }
    // Asleep: not moved during the last step, and not listed as moving.
    let rested: Vec<Aabb> = w.aabbs().to_vec();
    w.step();
    assert_eq!(w.phase(), Some(1));
    let before: Vec<Aabb> = w.aabbs().to_vec();
    w.step();
    assert_eq!(w.moving().len(), 100, "the explosion wakes every object");
    assert!(rested.len() == 101 && rested[..100] != before[..100]);
    let center = Vec3::splat(w.side() / 2.0);
    let outward = (0..100)
        .filter(|&i| {
            // Horizontally: the ground reflects the downward half of the blast.
            let d = w.aabbs()[i].center() - before[i].center();
            let away = before[i].center() - center;
            d.x * away.x + d.z * away.z > 0.0
        })
        .count();
    assert!(
        outward >= 80,
        "{outward} of 100 flew outward (random: about 50)"
    );
}
