//! The plugin inside a headless Bevy app: after every step, the contact graph's edges are
//! exactly the brute-force model's pairs (see `common::expected_pairs`), on a pile, on a scene
//! with every pair rule, and on a scene where colliders come, go and change.
//!
//! What is compared, and why the enlarged boxes: avian's narrow phase keeps a contact edge
//! while the two colliders' `EnlargedAabb`s overlap (and their layers interact) and drops it
//! then, so the edges a broad phase can stand behind are the pairs of overlapping enlarged
//! boxes; avian's own BVH broad phase stores the same enlarged boxes. The check runs in the
//! physics schedule between the narrow phase and the solver, where the boxes are those both
//! phases saw in this step (after the step, avian recomputes them for the next one). An edge
//! of a collider whose box became non-finite may stay from the step before (avian's narrow
//! phase never finds a NaN box disjoint); it may not appear.

mod common;

use std::collections::BTreeSet;

use avian3d::collider_tree::{ColliderTreeProxyKey, ColliderTrees, MovedProxies};
use avian3d::prelude::*;
use bevy::prelude::*;
use broadphase_avian::LibraryBroadPhase;
use common::scene::{spawn_ground, spawn_pile, Rng};
use common::{app, assert_exact, run, Check, Team, Which};

const STEPS: usize = 300;

#[test]
fn the_check_fails_without_a_broad_phase() {
    let mut app = app(Which::Nothing);
    spawn_ground(app.world_mut(), 50);
    spawn_pile(app.world_mut(), 50, 1);
    run(&mut app, 60, |_, _| {});
    let check = app.world().resource::<Check>();
    assert!(check.pairs > 0 && !check.mismatches.is_empty());
}

#[test]
fn pile_pairs_are_exact() {
    for name in ["sap", "sort-and-sweep", "dynamic-tree", "grid"] {
        let mut app = app(Which::Ours(name));
        spawn_ground(app.world_mut(), 200);
        spawn_pile(app.world_mut(), 200, 7);
        run(&mut app, STEPS, |_, _| {});
        let (steps, pairs, touching) = assert_exact(&app, name);
        // The first update only starts the clock: one physics step fewer than updates.
        assert!(steps + 1 >= STEPS, "{steps}");
        assert!(
            pairs > 0 && touching > 0,
            "{name}: {pairs} pairs, {touching} touching"
        );
        // Every phase of the plugin's step ran and was timed.
        let times = app.world().resource::<LibraryBroadPhase>().phase_times();
        let zero = std::time::Duration::ZERO;
        assert!(
            times.read > zero && times.update > zero && times.edges > zero,
            "{name}: {times:?}"
        );
    }
}

#[test]
fn every_algorithm_is_exact_on_a_small_pile() {
    for &name in broadphase::ALGORITHMS {
        let mut app = app(Which::Ours(name));
        spawn_ground(app.world_mut(), 60);
        spawn_pile(app.world_mut(), 60, 3);
        run(&mut app, 120, |_, _| {});
        let (_, pairs, _) = assert_exact(&app, name);
        assert!(pairs > 0, "{name}");
    }
}

/// Layers, sensors (static and dynamic), joints with collision disabled, a hook that refuses
/// pairs of one team, a two-collider body, colliders without a body and a kinematic body.
fn spawn_rules_scene(world: &mut World) -> Vec<Entity> {
    spawn_ground(world, 100);
    let bodies = spawn_pile(world, 100, 11);
    for (i, &body) in bodies.iter().enumerate() {
        let mut entity = world.entity_mut(body);
        match i % 5 {
            0 => {
                entity.insert(CollisionLayers::from_bits(0b01, 0b01));
            }
            1 => {
                entity.insert(CollisionLayers::from_bits(0b10, 0b11));
            }
            2 => {
                entity.insert((Team((i / 5 % 2) as u32), ActiveCollisionHooks::FILTER_PAIRS));
            }
            _ => {}
        }
    }
    // Joints with collision disabled between neighbours of the pile, and one with it on.
    for pair in bodies.chunks(2).take(20) {
        world.spawn((DistanceJoint::new(pair[0], pair[1]), JointCollisionDisabled));
    }
    world.spawn(DistanceJoint::new(bodies[50], bodies[51]));
    // Static sensors in the pile (they pair with the ground), and a dynamic one.
    for x in [-3.0, 0.0, 3.0] {
        world.spawn((
            RigidBody::Static,
            Sensor,
            Collider::cuboid(2.0, 4.0, 2.0),
            Transform::from_xyz(x, 1.0, 0.0),
        ));
    }
    world.spawn((
        RigidBody::Dynamic,
        Sensor,
        Collider::sphere(1.0),
        Transform::from_xyz(1.0, 8.0, 1.0),
    ));
    // A body with two colliders (its own pair is never reported).
    world
        .spawn((RigidBody::Dynamic, Transform::from_xyz(-2.0, 12.0, 2.0)))
        .with_children(|children| {
            children.spawn((
                Collider::cuboid(1.0, 1.0, 1.0),
                Transform::from_xyz(0.3, 0.0, 0.0),
            ));
            children.spawn((Collider::sphere(0.6), Transform::from_xyz(-0.3, 0.0, 0.0)));
        });
    // Colliders without a body: they pair with bodies, never with each other.
    world.spawn((
        Collider::cuboid(3.0, 1.0, 3.0),
        Transform::from_xyz(2.0, 3.0, -2.0),
    ));
    world.spawn((Collider::sphere(1.0), Transform::from_xyz(2.5, 3.0, -2.0)));
    // A kinematic body sweeping through the pile.
    world.spawn((
        RigidBody::Kinematic,
        Collider::cuboid(1.0, 6.0, 1.0),
        Transform::from_xyz(-8.0, 3.0, 0.0),
        LinearVelocity(Vec3::new(2.0, 0.0, 0.0)),
    ));
    bodies
}

#[test]
fn rules_scene_pairs_are_exact() {
    let mut app = app(Which::Ours(broadphase_avian::DEFAULT_ALGORITHM));
    spawn_rules_scene(app.world_mut());
    run(&mut app, STEPS, |_, _| {});
    let (_, pairs, touching) = assert_exact(&app, "rules");
    assert!(pairs > 0 && touching > 0);
}

fn non_finite(value: f32) -> broadphase_avian::EnlargedAabb {
    broadphase_avian::EnlargedAabb::new(ColliderAabb::from_min_max(
        Vec3::new(value, 0.0, 0.0),
        Vec3::new(value, 1.0, 1.0),
    ))
}

/// Sets a collider's enlarged box as avian's AABB update does when a body is flung: the new
/// box in the collider and in its collider tree's proxy, and the proxy marked as moved for
/// the broad phase. (Avian asserts finite positions in debug builds, so a flung body is
/// emulated by setting its box directly; and since the tree's debug assertions reject NaN,
/// a NaN corner enters the tree as an infinite one: to the plugin both are non-finite.)
fn set_enlarged(world: &mut World, entity: Entity, aabb: broadphase_avian::EnlargedAabb) {
    world.entity_mut(entity).insert(aabb);
    let Some(&key) = world.get::<ColliderTreeProxyKey>(entity) else {
        return;
    };
    if key != ColliderTreeProxyKey::PLACEHOLDER {
        let b = aabb.get();
        let no_nan = |v: Vec3| Vec3::select(v.is_nan_mask(), Vec3::INFINITY, v);
        let in_tree = ColliderAabb::from_min_max(no_nan(b.min), no_nan(b.max));
        world
            .resource_mut::<ColliderTrees>()
            .tree_for_type_mut(key.tree_type())
            .resize_proxy_aabb(key.id(), in_tree.into());
        world.resource_mut::<MovedProxies>().insert(key);
    }
}

/// Every 10 steps something happens to a collider: spawned, despawned, disabled and enabled
/// again, layers changed, made a sensor and back, body disabled and enabled, body type
/// replaced, flung to a non-finite position and brought back.
fn churn(app: &mut App, step: usize, bodies: &mut Vec<Entity>, rng: &mut Rng) {
    if step % 10 != 5 || bodies.len() < 10 {
        return;
    }
    let world = app.world_mut();
    let pick = |rng: &mut Rng, len: usize| (rng.next_u64() % len as u64) as usize;
    let body = bodies[pick(rng, bodies.len())];
    match (step / 10) % 9 {
        0 => {
            let e = world
                .spawn((
                    RigidBody::Dynamic,
                    Collider::sphere(0.5),
                    Transform::from_xyz(rng.range(-3.0, 3.0), 6.0, rng.range(-3.0, 3.0)),
                ))
                .id();
            bodies.push(e);
        }
        1 => {
            let i = pick(rng, bodies.len());
            let e = bodies.swap_remove(i);
            world.despawn(e);
        }
        2 => {
            world.entity_mut(body).insert(ColliderDisabled);
        }
        3 => {
            for &b in bodies.iter() {
                world.entity_mut(b).remove::<ColliderDisabled>();
            }
        }
        4 => {
            world
                .entity_mut(body)
                .insert(CollisionLayers::from_bits(0b100, 0b100));
        }
        5 => {
            let mut entity = world.entity_mut(body);
            if entity.contains::<Sensor>() {
                entity.remove::<Sensor>();
            } else {
                entity.insert(Sensor);
            }
        }
        6 => {
            let mut entity = world.entity_mut(body);
            if entity.contains::<RigidBodyDisabled>() {
                entity.remove::<RigidBodyDisabled>();
            } else {
                entity.insert(RigidBodyDisabled);
            }
        }
        7 => {
            let mut entity = world.entity_mut(body);
            let static_now = entity.get::<RigidBody>().is_some_and(|rb| rb.is_static());
            entity.insert(if static_now {
                RigidBody::Dynamic
            } else {
                RigidBody::Static
            });
        }
        _ => {
            // A non-finite box; avian recomputes it at the end of the step when the body is
            // awake.
            let value = if step % 20 == 5 {
                f32::NAN
            } else {
                f32::INFINITY
            };
            set_enlarged(world, body, non_finite(value));
        }
    }
}

#[test]
fn lifecycle_pairs_are_exact_and_non_finite_boxes_are_left_out() {
    let mut app = app(Which::Ours(broadphase_avian::DEFAULT_ALGORITHM));
    spawn_ground(app.world_mut(), 150);
    let mut bodies = spawn_pile(app.world_mut(), 150, 5);
    let mut rng = Rng::new(99);
    run(&mut app, STEPS, |app, step| {
        churn(app, step, &mut bodies, &mut rng)
    });
    let (_, pairs, _) = assert_exact(&app, "lifecycle");
    assert!(pairs > 0);
}

#[test]
fn a_non_finite_box_is_left_out_until_finite_and_nothing_else_is_lost() {
    let mut app = app(Which::Ours(broadphase_avian::DEFAULT_ALGORITHM));
    spawn_ground(app.world_mut(), 40);
    spawn_pile(app.world_mut(), 40, 8);
    run(&mut app, 30, |_, _| {});
    let count = |app: &App| app.world().resource::<LibraryBroadPhase>().proxy_count();
    assert_eq!(count(&app), 41);
    // A static collider inside the pile: avian leaves its box alone until it moves.
    let flung = app
        .world_mut()
        .spawn((
            RigidBody::Static,
            Collider::cuboid(2.0, 2.0, 2.0),
            Transform::from_xyz(0.0, 1.0, 0.0),
        ))
        .id();
    run(&mut app, 3, |_, _| {});
    assert_eq!(count(&app), 42);
    for value in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let finite = *app
            .world()
            .get::<broadphase_avian::EnlargedAabb>(flung)
            .unwrap();
        set_enlarged(app.world_mut(), flung, non_finite(value));
        run(&mut app, 5, |_, _| {});
        let state = app.world().resource::<LibraryBroadPhase>();
        assert!(!state.contains(flung), "{value}");
        assert_eq!(state.proxy_count(), 41, "{value}: the other colliders stay");
        set_enlarged(app.world_mut(), flung, finite);
        run(&mut app, 5, |_, _| {});
        assert!(
            app.world().resource::<LibraryBroadPhase>().contains(flung),
            "{value}"
        );
        assert_eq!(count(&app), 42);
    }
    assert_exact(&app, "non-finite");
}

/// avian's own broad phase on the same scenes: its graph matches the same model, so given the
/// same state both plugins hand the narrow phase the same pairs, and the narrow phase computes
/// the same touching contacts from them. Run side by side, the two simulations stay identical
/// until the solver, which visits contacts in insertion order, rounds differently; while the
/// positions are bit-identical, the touching contacts must be identical too.
#[test]
fn avian_own_broad_phase_matches_the_same_model_and_the_same_touching_contacts() {
    let mut theirs = app(Which::Avian);
    let mut ours = app(Which::Ours(broadphase_avian::DEFAULT_ALGORITHM));
    let ga = spawn_ground(theirs.world_mut(), 200);
    let a = spawn_pile(theirs.world_mut(), 200, 21);
    let gb = spawn_ground(ours.world_mut(), 200);
    let b = spawn_pile(ours.world_mut(), 200, 21);
    // The plugins' observers are entities too: map theirs to ours by spawn order.
    let to_ours: std::collections::HashMap<Entity, Entity> = a
        .iter()
        .copied()
        .zip(b.iter().copied())
        .chain([(ga, gb)])
        .collect();
    let mut identical_steps = 0;
    let mut compared_touching = 0;
    for _ in 0..STEPS {
        theirs.update();
        ours.update();
        let same = a.iter().zip(&b).all(|(&x, &y)| {
            theirs.world().get::<Position>(x).map(|p| p.0)
                == ours.world().get::<Position>(y).map(|p| p.0)
        });
        if !same {
            continue;
        }
        identical_steps += 1;
        let t: BTreeSet<(Entity, Entity)> = theirs
            .world()
            .resource::<Check>()
            .last_touching
            .iter()
            .map(|(x, y)| {
                let (x, y) = (to_ours[x], to_ours[y]);
                if x <= y {
                    (x, y)
                } else {
                    (y, x)
                }
            })
            .collect();
        let o = &ours.world().resource::<Check>().last_touching;
        assert_eq!(&t, o, "touching contacts differ at identical positions");
        compared_touching += o.len();
    }
    assert_exact(&theirs, "avian's own broad phase");
    assert_exact(&ours, "ours");
    eprintln!("identical steps {identical_steps}, touching compared {compared_touching}");
    assert!(identical_steps > 0);
}

#[test]
fn a_step_looks_only_at_the_colliders_that_moved() {
    // 300 static colliders and one falling ball: once all are in (the first physics steps
    // see every collider as new), each step looks at the ball at most, not at every collider.
    let mut app = app(Which::Ours(broadphase_avian::DEFAULT_ALGORITHM));
    for i in 0..300 {
        let (x, z) = ((i % 20) as f32 * 3.0, (i / 20) as f32 * 3.0);
        app.world_mut().spawn((
            RigidBody::Static,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(x, 0.0, z),
        ));
    }
    app.world_mut().spawn((
        RigidBody::Dynamic,
        Collider::sphere(0.5),
        Transform::from_xyz(0.0, 8.0, 0.0),
    ));
    let synced = |app: &App| {
        app.world()
            .resource::<LibraryBroadPhase>()
            .synced_last_step()
    };
    run(&mut app, 5, |_, _| {});
    assert_eq!(
        app.world().resource::<LibraryBroadPhase>().proxy_count(),
        301
    );
    let mut most = 0;
    for _ in 0..120 {
        app.update();
        most = most.max(synced(&app));
    }
    // The ball, falling through its enlarged box, is looked at; nothing else is.
    assert_eq!(most, 1, "a step looked at {most} colliders");
    assert_exact(&app, "static field");
}

/// Bodies whose colliders touch now (edges of the contact graph between two pile bodies).
fn touching_body_pairs(app: &App, bodies: &[Entity], most: usize) -> Vec<(Entity, Entity)> {
    let set: BTreeSet<Entity> = bodies.iter().copied().collect();
    let mut used = BTreeSet::new();
    let mut out = Vec::new();
    let graph = app.world().resource::<ContactGraph>();
    for pair in graph.iter_active() {
        let (a, b) = (pair.collider1, pair.collider2);
        if set.contains(&a) && set.contains(&b) && !used.contains(&a) && !used.contains(&b) {
            used.insert(a);
            used.insert(b);
            out.push((a, b));
            if out.len() == most {
                break;
            }
        }
    }
    out
}

/// Rules that change while no collider does: joints with collision disabled added between
/// touching bodies (avian drops their edges), then collisions allowed again in every way a
/// joint allows them (`JointCollisionDisabled` removed, the joint despawned, `JointDisabled`
/// added), disabled again, and a collider moved to another body and back (the same-body
/// rule). The plugin lists the pairs of bodies whose joint allows collisions again at once;
/// avian's own broad phase re-tests them only once a box leaves its enlarged box, so its graph
/// lacks them for a few steps.
///
/// Avian's simulation islands are off here: in avian 0.7, adding `JointCollisionDisabled`
/// between touching bodies removes their contact edges without unlinking them from their
/// island, and the island code panics later ("Previous contact has no island") with either
/// broad phase. Left out too, because no broad phase could match the model there: a joint
/// whose collisions become disabled in another way than adding `JointCollisionDisabled`
/// (re-enabling a disabled joint, say), whose edges avian keeps until the boxes part.
fn rule_changes(which: Which) -> App {
    let mut app = common::app_with(which, false);
    spawn_ground(app.world_mut(), 80);
    let bodies = spawn_pile(app.world_mut(), 80, 5);
    let (first, second) = (bodies[0], bodies[1]);
    let mut joints = Vec::new();
    let mut extra = None;
    run(&mut app, 240, |app, step| match step {
        // A sensor collider of the first body where the second body is.
        100 => {
            let (a, b) = (
                app.world().get::<Transform>(first).unwrap(),
                app.world().get::<Transform>(second).unwrap(),
            );
            let at = a.rotation.inverse() * (b.translation - a.translation);
            let child = (
                Collider::sphere(0.5),
                Sensor, // so that it does not push the second body away
                Transform::from_translation(at),
                ChildOf(first),
            );
            extra = Some(app.world_mut().spawn(child).id());
        }
        120 => {
            for (a, b) in touching_body_pairs(app, &bodies, 8) {
                let joint = (DistanceJoint::new(a, b), JointCollisionDisabled);
                joints.push(app.world_mut().spawn(joint).id());
            }
        }
        140 => {
            for &joint in &joints[..2] {
                app.world_mut()
                    .entity_mut(joint)
                    .remove::<JointCollisionDisabled>();
            }
            for &joint in &joints[2..4] {
                app.world_mut().despawn(joint);
            }
            for &joint in &joints[4..6] {
                app.world_mut().entity_mut(joint).insert(JointDisabled);
            }
        }
        160 => {
            for &joint in &joints[..2] {
                app.world_mut()
                    .entity_mut(joint)
                    .insert(JointCollisionDisabled);
            }
        }
        180 | 200 => {
            // The extra collider overlaps the second body's: their pair goes when both are
            // of the second body, and comes back when the extra one returns to the first.
            let graph = app.world().resource::<ContactGraph>();
            assert_eq!(graph.contains(extra.unwrap(), second), step == 180);
            let body = if step == 180 { second } else { first };
            app.world_mut()
                .entity_mut(extra.unwrap())
                .insert(ChildOf(body));
        }
        _ => {}
    });
    assert_eq!(joints.len(), 8, "the pile should have 8 touching pairs");
    app
}

#[test]
fn rule_changes_without_collider_changes_are_exact() {
    let app = rule_changes(Which::Ours(broadphase_avian::DEFAULT_ALGORITHM));
    let (steps, pairs, _) = assert_exact(&app, "rule changes");
    assert!(steps > 200 && pairs > 0, "{steps} steps, {pairs} pairs");
}
