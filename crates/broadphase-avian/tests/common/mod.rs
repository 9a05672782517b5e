//! Headless apps, scenes and the brute-force check shared by the integration tests.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::time::Duration;

use avian3d::collision::collider::EnlargedAabb;
use avian3d::dynamics::solver::joint_graph::JointGraph;
use avian3d::prelude::*;
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use broadphase_avian::BroadPhasePlugin;

#[path = "../../examples/pile/scene.rs"]
pub mod scene;

/// Colliders of one team never collide when either has `ActiveCollisionHooks::FILTER_PAIRS`.
#[derive(Component, Clone, Copy)]
pub struct Team(pub u32);

/// The test's collision hooks: `filter_pairs` refuses pairs of one team.
#[derive(SystemParam)]
pub struct TeamHooks<'w, 's> {
    teams: Query<'w, 's, &'static Team>,
}

impl CollisionHooks for TeamHooks<'_, '_> {
    fn filter_pairs(&self, collider1: Entity, collider2: Entity, _: &mut Commands) -> bool {
        team_rule(
            self.teams.get(collider1).ok(),
            self.teams.get(collider2).ok(),
        )
    }
}

fn team_rule(a: Option<&Team>, b: Option<&Team>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.0 != b.0,
        _ => true,
    }
}

/// Which broad phase an app runs.
#[derive(Clone, Copy, Debug)]
pub enum Which {
    /// avian3d's own `BvhBroadPhasePlugin`.
    Avian,
    /// This crate's plugin with the named algorithm.
    Ours(&'static str),
    /// No broad phase at all (to show that the check can fail).
    Nothing,
}

/// A headless app (`MinimalPlugins`) stepping physics once per `update` at 60 Hz, with the
/// brute-force check after the narrow phase of every step.
pub fn app(which: Which) -> App {
    app_with(which, true)
}

/// [`app`], with avian's simulation islands (and sleeping) or without them.
pub fn app_with(which: Which, islands: bool) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, TransformPlugin));
    let mut physics = PhysicsPlugins::default()
        .with_collision_hooks::<TeamHooks>()
        .build()
        .disable::<BvhBroadPhasePlugin<TeamHooks>>();
    if !islands {
        physics = physics
            .disable::<IslandPlugin>()
            .disable::<IslandSleepingPlugin>();
    }
    match which {
        Which::Avian => app.add_plugins(physics.enable::<BvhBroadPhasePlugin<TeamHooks>>()),
        Which::Ours(name) => {
            app.add_plugins(physics.add(BroadPhasePlugin::<TeamHooks>::with_hooks(name)))
        }
        Which::Nothing => app.add_plugins(physics),
    };
    app.insert_resource(Time::<Fixed>::from_hz(60.0));
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
        1.0 / 60.0,
    )));
    app.init_resource::<Check>();
    app.add_systems(
        PhysicsSchedule,
        check_pairs
            .after(PhysicsStepSystems::NarrowPhase)
            .before(PhysicsStepSystems::Solver),
    );
    app.finish();
    app.cleanup();
    app
}

/// What the check found over the steps run so far.
#[derive(Resource, Default, Debug)]
pub struct Check {
    /// Steps checked.
    pub steps: usize,
    /// Expected pairs summed over the steps.
    pub pairs: usize,
    /// Touching pairs summed over the steps.
    pub touching: usize,
    /// The first differences found (step, description).
    pub mismatches: Vec<String>,
    /// The touching pairs of the last step.
    pub last_touching: BTreeSet<(Entity, Entity)>,
    /// The edges of the last step.
    pub last_edges: BTreeSet<(Entity, Entity)>,
}

fn ordered(a: Entity, b: Entity) -> (Entity, Entity) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

type Colliders<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        &'static EnlargedAabb,
        Option<&'static ColliderOf>,
        Option<&'static CollisionLayers>,
        Has<Sensor>,
        Option<&'static ActiveCollisionHooks>,
        Option<&'static Team>,
    ),
    (With<ColliderMarker>, Without<ColliderDisabled>),
>;

/// The brute-force model: every pair of enabled colliders with finite enlarged boxes that
/// overlap (closed boxes) and that avian's rules allow.
pub fn expected_pairs(
    colliders: &Colliders,
    bodies: &Query<&RigidBody>,
    joints: &JointGraph,
) -> BTreeSet<(Entity, Entity)> {
    let list: Vec<_> = colliders
        .iter()
        .filter(|(_, aabb, ..)| {
            let b = aabb.get();
            b.min.is_finite() && b.max.is_finite() && b.min.cmple(b.max).all()
        })
        .collect();
    let mut out = BTreeSet::new();
    for (i, a) in list.iter().enumerate() {
        for b in &list[i + 1..] {
            let (e1, box1, of1, layers1, sensor1, hooks1, team1) = *a;
            let (e2, box2, of2, layers2, sensor2, hooks2, team2) = *b;
            if !box1.get().intersects(&box2.get()) {
                continue;
            }
            let l1 = layers1.copied().unwrap_or_default();
            let l2 = layers2.copied().unwrap_or_default();
            if !l1.interacts_with(l2) {
                continue;
            }
            let body1 = of1.map(|of| of.body);
            let body2 = of2.map(|of| of.body);
            if body1 == body2 {
                continue;
            }
            let static1 = body1.is_some_and(|b| bodies.get(b).is_ok_and(|rb| rb.is_static()));
            let static2 = body2.is_some_and(|b| bodies.get(b).is_ok_and(|rb| rb.is_static()));
            if static1 && static2 && !sensor1 && !sensor2 {
                continue;
            }
            if let (Some(b1), Some(b2)) = (body1, body2) {
                if joints.joints_between(b1, b2).any(|j| j.collision_disabled) {
                    continue;
                }
            }
            let hooks = hooks1.copied().unwrap_or_default() | hooks2.copied().unwrap_or_default();
            if hooks.contains(ActiveCollisionHooks::FILTER_PAIRS) && !team_rule(team1, team2) {
                continue;
            }
            out.insert(ordered(e1, e2));
        }
    }
    out
}

/// Compares the contact graph's edges (active and sleeping) with the brute-force model.
fn check_pairs(
    colliders: Colliders,
    bodies: Query<&RigidBody>,
    joints: Res<JointGraph>,
    graph: Res<ContactGraph>,
    mut check: ResMut<Check>,
) {
    let expected = expected_pairs(&colliders, &bodies, &joints);
    let mut edges = BTreeSet::new();
    let mut touching = BTreeSet::new();
    for pair in graph.iter_active().chain(graph.iter_sleeping()) {
        let key = ordered(pair.collider1, pair.collider2);
        edges.insert(key);
        if pair.is_touching() {
            touching.insert(key);
        }
    }
    // A collider whose box became non-finite is out of the broad phase, but the edges it had
    // are avian's narrow phase's to drop, and it keeps them (a NaN box is never disjoint). So
    // an edge of such a collider may stay from the last step; it may not appear.
    let non_finite: BTreeSet<Entity> = colliders
        .iter()
        .filter(|(_, aabb, ..)| {
            let b = aabb.get();
            !(b.min.is_finite() && b.max.is_finite())
        })
        .map(|(e, ..)| e)
        .collect();
    let kept = |key: &(Entity, Entity)| {
        (non_finite.contains(&key.0) || non_finite.contains(&key.1))
            && check.last_edges.contains(key)
    };
    let step = check.steps;
    let extra: Vec<_> = edges
        .difference(&expected)
        .filter(|key| !kept(key))
        .copied()
        .collect();
    let missing: Vec<_> = expected.difference(&edges).copied().collect();
    if !(extra.is_empty() && missing.is_empty()) && check.mismatches.len() < 20 {
        let missing: Vec<_> = missing.iter().take(5).collect();
        let extra: Vec<_> = extra.iter().take(5).collect();
        check.mismatches.push(format!(
            "step {step}: {} expected, {} edges; missing {missing:?}, extra {extra:?}",
            expected.len(),
            edges.len()
        ));
    }
    check.steps += 1;
    check.pairs += expected.len();
    check.touching += touching.len();
    check.last_touching = touching;
    check.last_edges = edges;
}

/// Runs `steps` physics steps, calling `each` before every step.
pub fn run(app: &mut App, steps: usize, mut each: impl FnMut(&mut App, usize)) {
    for step in 0..steps {
        each(app, step);
        app.update();
    }
}

/// The check's summary, panicking with the mismatches if there are any.
pub fn assert_exact(app: &App, what: &str) -> (usize, usize, usize) {
    let check = app.world().resource::<Check>();
    assert!(
        check.mismatches.is_empty(),
        "{what}: contact graph differs from the brute-force model:\n{}",
        check.mismatches.join("\n")
    );
    (check.steps, check.pairs, check.touching)
}
