//! The broad-phase system and the observers that keep the library's pairs and avian's contact
//! graph in step.

use std::collections::BTreeSet;
use std::time::Duration;

use avian3d::collider_tree::{
    ColliderTreeProxy, ColliderTreeProxyKey, ColliderTrees, MovedProxies,
};
use avian3d::collision::collider::EnlargedAabb;
use avian3d::collision::contact_types::ContactEdgeFlags;
use avian3d::collision::CollisionDiagnostics;
use avian3d::dynamics::solver::islands::BodyIslandNode;
use avian3d::dynamics::solver::joint_graph::JointGraph;
use avian3d::prelude::*;
use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::system::{StaticSystemParam, SystemParamItem};
use bevy::prelude::*;
use broadphase::{Aabb, BroadPhase, CollisionFilter, ProxyKind};

use crate::proxies::{Proxies, Tracked};

/// The library broad phase the plugin runs, as a resource: its algorithm and current pairs
/// can be read (for diagnostics and tests).
#[derive(Resource)]
pub struct LibraryBroadPhase {
    proxies: Proxies,
    /// Colliders whose contact edges avian dropped for reasons other than their boxes
    /// (sensor added or removed, body disabled, enabled, or its type replaced): their current
    /// pairs are listed again at the next update and re-added to the graph.
    report_again: Vec<Entity>,
    /// Overlapping pairs that a rule other than layers and kinds refused (same body, a joint
    /// with collision disabled, a hook), asked again whenever one of the two boxes moves, as
    /// avian's broad phase does.
    refused: BTreeSet<(Entity, Entity)>,
    /// Colliders whose box moved (or that were inserted or reported again) this step.
    moved: Vec<Entity>,
    /// Entities whose proxy may be out of date in a way avian's moved set does not show
    /// (despawned, collider removed, disabled, layers inserted or removed): synced first at
    /// the next step.
    dirty: Vec<Entity>,
    /// The pairs to try for an edge this step (kept for its capacity).
    candidates: Vec<(Entity, Entity)>,
    /// Colliders synced in the last step.
    synced: usize,
    /// The joints with collision disabled, with their bodies, by joint entity, as the joint
    /// graph held them at the last step that changed it.
    no_collision_joints: Vec<(Entity, Entity, Entity)>,
    /// The same for the joint graph now (kept for its capacity).
    no_collision_scratch: Vec<(Entity, Entity, Entity)>,
    times: PhaseTimes,
}

/// Where the plugin's broad-phase time went, summed over every step so far: their sum is what
/// it adds to avian's `CollisionDiagnostics::broad_phase`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseTimes {
    /// Reading the colliders that moved or changed and handing their boxes, kinds and filters
    /// to the library (work that avian's own broad phase does outside its timer, when it
    /// updates its trees).
    pub read: Duration,
    /// The library's update: finding the pairs that began and ended.
    pub update: Duration,
    /// Applying avian's rules to the pairs that began and adding their contact edges (which
    /// avian's own broad phase does too).
    pub edges: Duration,
}

impl LibraryBroadPhase {
    pub(crate) fn new(broad_phase: Box<dyn BroadPhase>) -> Self {
        Self {
            proxies: Proxies::new(broad_phase),
            report_again: Vec::new(),
            refused: BTreeSet::new(),
            moved: Vec::new(),
            dirty: Vec::new(),
            candidates: Vec::new(),
            synced: 0,
            no_collision_joints: Vec::new(),
            no_collision_scratch: Vec::new(),
            times: PhaseTimes::default(),
        }
    }

    /// Where the broad-phase time of every step so far went (see [`PhaseTimes`]).
    pub fn phase_times(&self) -> PhaseTimes {
        self.times
    }

    /// The algorithm's name.
    pub fn algorithm(&self) -> &'static str {
        self.proxies.name()
    }

    /// The number of colliders in the broad phase.
    pub fn proxy_count(&self) -> usize {
        self.proxies.len()
    }

    /// The pairs of overlapping boxes the library holds (layers and static–static applied,
    /// the other rules not), each as two collider entities.
    pub fn pairs(&self) -> Vec<(Entity, Entity)> {
        self.proxies.pairs()
    }

    /// How many colliders the last step looked at: those that moved or changed, not all of
    /// them (a collider may count twice when it changed in two ways).
    pub fn synced_last_step(&self) -> usize {
        self.synced
    }

    /// True when `entity` has a proxy (is in the broad phase).
    pub fn contains(&self, entity: Entity) -> bool {
        self.proxies.proxy_of(entity).is_some()
    }
}

/// The proxy inputs of one collider: its enlarged box when finite, its kind and filter.
fn proxy_inputs(
    aabb: &EnlargedAabb,
    body: Option<&RigidBody>,
    layers: Option<&CollisionLayers>,
    is_sensor: bool,
) -> (Option<Aabb>, ProxyKind, CollisionFilter) {
    let aabb = aabb.get();
    let aabb = Aabb::from_arrays(aabb.min.to_array(), aabb.max.to_array()).ok();
    let kind = kind_of(body.is_some_and(RigidBody::is_static), is_sensor);
    // `CollisionLayers::interacts_with` is `a.memberships & b.filters != 0 &&
    // b.memberships & a.filters != 0`, the library's group/mask test exactly.
    let layers = layers.copied().unwrap_or_default();
    let filter = CollisionFilter::new(layers.memberships.0, layers.filters.0);
    (aabb, kind, filter)
}

/// The library's kind of a collider: avian skips pairs of two static bodies unless a sensor
/// is one of them, so a static non-sensor collider is the library's static kind, which never
/// pairs with another.
fn kind_of(static_body: bool, is_sensor: bool) -> ProxyKind {
    if static_body && !is_sensor {
        ProxyKind::Static
    } else {
        ProxyKind::Dynamic
    }
}

/// The per-collider data avian's rules and edge flags need, read when a pair begins.
#[derive(Clone, Copy)]
struct PairSide {
    body: Option<Entity>,
    body_disabled: bool,
    sensor: bool,
    contact_events: bool,
    hooks: ActiveCollisionHooks,
}

type SideQuery<'w, 's> = Query<
    'w,
    's,
    (
        Option<&'static ColliderOf>,
        Has<Sensor>,
        Has<CollisionEventsEnabled>,
        Option<&'static ActiveCollisionHooks>,
    ),
>;

fn side(colliders: &SideQuery, bodies: &Query<Has<RigidBodyDisabled>>, e: Entity) -> PairSide {
    let (of, sensor, contact_events, hooks) = colliders.get(e).unwrap_or_default();
    let body = of.map(|of| of.body);
    PairSide {
        body,
        body_disabled: body.is_some_and(|b| bodies.get(b).unwrap_or(false)),
        sensor,
        contact_events,
        hooks: hooks.copied().unwrap_or_default(),
    }
}

/// Applies avian's rules beyond layers and static–static to an overlapping pair: true when
/// the pair may have a contact edge.
fn allowed<H: CollisionHooks>(
    (e1, s1): (Entity, PairSide),
    (e2, s2): (Entity, PairSide),
    joint_graph: &JointGraph,
    hooks: &H,
    commands: &mut Commands,
) -> bool {
    // No collisions between colliders of one body; like avian, colliders without a body
    // (`None == None`) do not collide with each other either.
    if s1.body == s2.body {
        return false;
    }
    if let (Some(b1), Some(b2)) = (s1.body, s2.body) {
        if joint_graph
            .joints_between(b1, b2)
            .any(|edge| edge.collision_disabled)
        {
            return false;
        }
    }
    if (s1.hooks | s2.hooks).contains(ActiveCollisionHooks::FILTER_PAIRS) {
        return hooks.filter_pairs(e1, e2, commands);
    }
    true
}

/// Adds the contact edge of an allowed pair with avian's flags.
fn add_edge(
    contact_graph: &mut ContactGraph,
    (e1, s1): (Entity, PairSide),
    (e2, s2): (Entity, PairSide),
) {
    let mut edge = ContactEdge::new(e1, e2);
    edge.body1 = s1.body;
    edge.body2 = s2.body;
    edge.flags.set(
        ContactEdgeFlags::CONTACT_EVENTS,
        s1.contact_events || s2.contact_events,
    );
    let hooks = s1.hooks | s2.hooks;
    let constraints = !(s1.body_disabled || s2.body_disabled || s1.sensor || s2.sensor);
    contact_graph.add_edge_with(edge, |pair| {
        pair.body1 = s1.body;
        pair.body2 = s2.body;
        pair.flags.set(
            ContactPairFlags::MODIFY_CONTACTS,
            hooks.contains(ActiveCollisionHooks::MODIFY_CONTACTS),
        );
        pair.flags
            .set(ContactPairFlags::GENERATE_CONSTRAINTS, constraints);
    });
}

type ColliderQuery<'w, 's> = Query<
    'w,
    's,
    (
        &'static EnlargedAabb,
        Option<&'static ColliderOf>,
        Option<&'static CollisionLayers>,
        Has<Sensor>,
    ),
    (With<ColliderMarker>, Without<ColliderDisabled>),
>;

/// Lists again the pairs of two bodies whose joint stopped disabling their collisions: its
/// `JointCollisionDisabled` removed, the joint removed, despawned or disabled. Avian drops the
/// contact edges when collisions are disabled, but nothing re-adds them when they are allowed
/// again while the boxes overlap (avian's own broad phase re-tests such a pair only once one
/// of the boxes moves out of its enlarged box). O(joints with collision disabled), on steps
/// in which the joint graph changed.
fn joints_allowing_collisions_again(
    joints: &JointGraph,
    bodies: &Bodies,
    state: &mut LibraryBroadPhase,
) {
    let mut now = std::mem::take(&mut state.no_collision_scratch);
    now.clear();
    now.extend(
        joints
            .graph()
            .all_edge_weights()
            .filter(|edge| edge.collision_disabled)
            .map(|edge| (edge.entity, edge.body1, edge.body2)),
    );
    now.sort_unstable();
    let before = std::mem::take(&mut state.no_collision_joints);
    for &(joint, body1, body2) in &before {
        let still = now
            .binary_search_by_key(&joint, |&(j, ..)| j)
            .is_ok_and(|i| now[i] == (joint, body1, body2));
        if !still {
            report_body_again(body1, bodies, state);
            report_body_again(body2, bodies, state);
        }
    }
    state.no_collision_scratch = before;
    state.no_collision_joints = now;
}

/// Brings the proxy of `entity` to its collider's current box, kind and filter: inserts it,
/// updates it, or removes it when the entity is no longer an enabled collider (despawned,
/// disabled) or its box is not finite. Records the entity in `moved` when its box changed.
fn sync(
    state: &mut LibraryBroadPhase,
    entity: Entity,
    colliders: &ColliderQuery,
    rigid_bodies: &Query<&RigidBody>,
) {
    state.synced += 1;
    let Ok((enlarged, of, layers, is_sensor)) = colliders.get(entity) else {
        if let Some(tracked) = state.proxies.slot(entity).take() {
            if let Some(proxy) = tracked.proxy {
                state.proxies.remove(proxy.id);
            }
        }
        return;
    };
    let body = of.and_then(|of| rigid_bodies.get(of.body).ok());
    let (aabb, kind, filter) = proxy_inputs(enlarged, body, layers, is_sensor);
    let mut tracked = state.proxies.slot(entity).unwrap_or(Tracked {
        entity,
        proxy: None,
        warned: false,
    });
    match aabb {
        None => {
            if !tracked.warned {
                let b = enlarged.get();
                warn!(
                    "broadphase-avian: collider {entity} has a non-finite or inverted AABB \
                     (min {:?}, max {:?}); it is left out of the broad phase until its AABB \
                     is finite again",
                    b.min, b.max
                );
                tracked.warned = true;
            }
            if let Some(proxy) = tracked.proxy.take() {
                state.proxies.remove(proxy.id);
            }
        }
        Some(aabb) => {
            tracked.warned = false;
            let moved = match &mut tracked.proxy {
                Some(proxy) => {
                    let moved = proxy.aabb != aabb;
                    if let Err(error) = state.proxies.refresh(proxy, aabb, kind, filter) {
                        warn!("broadphase-avian: collider {entity}: {error}");
                    }
                    moved
                }
                None => {
                    match state.proxies.insert(entity, aabb, kind, filter) {
                        Ok(proxy) => tracked.proxy = Some(proxy),
                        Err(error) => warn!("broadphase-avian: collider {entity}: {error}"),
                    }
                    true
                }
            };
            if moved {
                state.moved.push(entity);
            }
        }
    }
    *state.proxies.slot(entity) = Some(tracked);
}

/// Gives a moved collider its new box without reading its other components: the common
/// case, a collider already in the broad phase with the same kind (from its proxy in avian's
/// collider tree) and a finite box. Its layers and sensor state need no reading, since their
/// changes reach the plugin through its observers. The box is read from the collider's
/// `EnlargedAabb` (which avian's tree holds a copy of): the moved colliders come in the
/// order avian's tree update visited them, the order of the component's storage, so these
/// reads run through memory in sequence where the tree's nodes would be visited at random.
/// False when the collider needs the full [`sync`]: new, its kind changed (a new body, a
/// body type replaced, a sensor toggled), its box not finite, or its entity index held by
/// an older entity.
fn move_in_place(
    state: &mut LibraryBroadPhase,
    key: ColliderTreeProxyKey,
    proxy: &ColliderTreeProxy,
    enlarged: &Query<&EnlargedAabb>,
) -> bool {
    let Ok(enlarged) = enlarged.get(proxy.collider) else {
        return false;
    };
    let b = enlarged.get();
    let Ok(aabb) = Aabb::from_arrays(b.min.to_array(), b.max.to_array()) else {
        return false;
    };
    let kind = kind_of(key.body() == Some(RigidBody::Static), proxy.is_sensor());
    let Some(moved) = state.proxies.move_tracked(proxy.collider, aabb, kind) else {
        return false;
    };
    state.synced += 1;
    if moved {
        state.moved.push(proxy.collider);
    }
    true
}

/// Syncs the proxies with the colliders that changed, updates the library's pairs and adds
/// the contact edges of the pairs that began.
///
/// Only changed colliders are visited: those whose enlarged box avian's collider trees
/// marked as moved (`MovedProxies`, which includes new and re-enabled colliders, a new
/// `ColliderOf` and body type changes) and those the observers noted (removed, disabled,
/// layers changed, sensor toggled, body disabled or replaced). A step of a resting pile costs in proportion
/// to what moved, not to the number of colliders.
#[allow(clippy::too_many_arguments)]
pub(crate) fn collect_collision_pairs<H: CollisionHooks>(
    mut state: ResMut<LibraryBroadPhase>,
    moved_proxies: Res<MovedProxies>,
    trees: Res<ColliderTrees>,
    colliders: ColliderQuery,
    enlarged: Query<&EnlargedAabb>,
    rigid_bodies: Query<&RigidBody>,
    sides: SideQuery,
    disabled_bodies: Query<Has<RigidBodyDisabled>>,
    hooks: StaticSystemParam<H>,
    mut commands: Commands,
    mut contact_graph: ResMut<ContactGraph>,
    joint_graph: Res<JointGraph>,
    bodies: Bodies,
    mut diagnostics: ResMut<CollisionDiagnostics>,
) where
    for<'w, 's> SystemParamItem<'w, 's, H>: CollisionHooks,
{
    let start = bevy::platform::time::Instant::now();
    let hooks = hooks.into_inner();
    let state = &mut *state;
    state.moved.clear();
    state.synced = 0;
    if joint_graph.is_changed() {
        joints_allowing_collisions_again(&joint_graph, &bodies, state);
    }

    // The observers' entities first: removals, so that an entity removed and re-added within
    // one frame ends up present.
    for i in 0..state.dirty.len() {
        let entity = state.dirty[i];
        sync(state, entity, &colliders, &rigid_bodies);
    }
    state.dirty.clear();
    for &key in moved_proxies.proxies() {
        let tree = trees.tree_for_type(key.tree_type());
        if let Some(proxy) = tree.get_proxy(key.id()) {
            if !move_in_place(state, key, proxy, &enlarged) {
                sync(state, proxy.collider, &colliders, &rigid_bodies);
            }
        }
    }
    for i in 0..state.report_again.len() {
        let entity = state.report_again[i];
        sync(state, entity, &colliders, &rigid_bodies);
    }

    for i in 0..state.report_again.len() {
        let entity = state.report_again[i];
        state.proxies.report_again(entity);
        state.moved.push(entity);
    }
    state.report_again.clear();
    let read = start.elapsed();
    state.proxies.update();
    let update = start.elapsed().saturating_sub(read);

    for (e1, e2) in state.proxies.ended() {
        state.refused.remove(&ordered(e1, e2));
    }

    // Pairs refused before are asked again when one of their boxes moved, as avian's broad
    // phase re-tests every pair of a moved box that has no edge.
    let mut candidates = std::mem::take(&mut state.candidates);
    candidates.clear();
    candidates.extend(state.proxies.begun());
    if !state.refused.is_empty() {
        let moved: bevy::platform::collections::HashSet<Entity> =
            state.moved.iter().copied().collect();
        let proxies = &state.proxies;
        state
            .refused
            .retain(|&(a, b)| proxies.proxy_of(a).is_some() && proxies.proxy_of(b).is_some());
        candidates.extend(
            state
                .refused
                .iter()
                .filter(|(a, b)| moved.contains(a) || moved.contains(b))
                .copied(),
        );
    }

    for &(e1, e2) in &candidates {
        if contact_graph.contains(e1, e2) {
            continue;
        }
        let s1 = side(&sides, &disabled_bodies, e1);
        let s2 = side(&sides, &disabled_bodies, e2);
        if allowed((e1, s1), (e2, s2), &joint_graph, &hooks, &mut commands) {
            state.refused.remove(&ordered(e1, e2));
            add_edge(&mut contact_graph, (e1, s1), (e2, s2));
        } else {
            state.refused.insert(ordered(e1, e2));
        }
    }

    state.candidates = candidates;
    let elapsed = start.elapsed();
    state.times.read += read;
    state.times.update += update;
    state.times.edges += elapsed.saturating_sub(read + update);
    diagnostics.broad_phase += elapsed;
}

fn ordered(a: Entity, b: Entity) -> (Entity, Entity) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

/// The colliders of bodies, disabled ones included.
type Bodies<'w, 's> =
    Query<'w, 's, &'static RigidBodyColliders, Or<(With<Disabled>, Without<Disabled>)>>;

/// Marks the colliders of a body whose contact edges avian dropped.
fn report_body_again(body: Entity, bodies: &Bodies, state: &mut LibraryBroadPhase) {
    if let Ok(colliders) = bodies.get(body) {
        state.report_again.extend(colliders.iter());
    }
}

/// Notes the observed entity, to be synced first at the next step.
fn note_dirty<E: EntityEvent, B: Bundle>(t: On<E, B>, mut s: ResMut<LibraryBroadPhase>) {
    s.dirty.push(t.event_target());
}

/// Notes the observed collider, whose pairs are listed again at the next step.
fn note_report_again<E: EntityEvent, B: Bundle>(t: On<E, B>, mut s: ResMut<LibraryBroadPhase>) {
    s.report_again.push(t.event_target());
}

/// Avian's narrow phase removes all contact edges of a collider when it becomes or stops
/// being a sensor, and of a body's colliders when the body is disabled, enabled (its island
/// node is added) or its `RigidBody` replaced or removed, while the boxes may still overlap.
/// These observers mirror those triggers so that the pairs are listed again at the next
/// update and their edges re-added: exact, and cheap (no per-step scan of all pairs).
pub(crate) fn add_observers(app: &mut App) {
    // Colliders that stop being enabled colliders: despawned or their collider removed,
    // disabled (`ColliderDisabled`) or their entity disabled. Re-enabled and new colliders
    // need no observer: avian's collider trees mark them as moved.
    app.add_observer(note_dirty::<Remove, ColliderMarker>);
    app.add_observer(note_dirty::<Add, ColliderDisabled>);
    app.add_observer(note_dirty::<Add, Disabled>);
    // Layers are an immutable component: inserting (or replacing) and removing them are the
    // only changes.
    app.add_observer(note_dirty::<Insert, CollisionLayers>);
    app.add_observer(note_dirty::<Remove, CollisionLayers>);
    app.add_observer(note_report_again::<Add, Sensor>);
    app.add_observer(note_report_again::<Remove, Sensor>);
    app.add_observer(
        |t: On<Add, BodyIslandNode>, b: Bodies, mut s: ResMut<LibraryBroadPhase>| {
            report_body_again(t.event_target(), &b, &mut s);
        },
    );
    app.add_observer(
        |t: On<Add, (Disabled, RigidBodyDisabled)>, b: Bodies, mut s: ResMut<LibraryBroadPhase>| {
            report_body_again(t.event_target(), &b, &mut s);
        },
    );
    app.add_observer(
        |t: On<Insert, RigidBody>, b: Bodies, mut s: ResMut<LibraryBroadPhase>| {
            report_body_again(t.event_target(), &b, &mut s);
        },
    );
    app.add_observer(
        |t: On<Remove, RigidBody>, b: Bodies, mut s: ResMut<LibraryBroadPhase>| {
            report_body_again(t.event_target(), &b, &mut s);
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_map_to_the_library_filter_exactly() {
        // Every combination of a few masks: avian's test and the library's agree.
        let masks = [0u32, 1, 2, 3, 0x8000_0000, u32::MAX];
        for &m1 in &masks {
            for &f1 in &masks {
                for &m2 in &masks {
                    for &f2 in &masks {
                        let l1 = CollisionLayers::from_bits(m1, f1);
                        let l2 = CollisionLayers::from_bits(m2, f2);
                        let a = CollisionFilter::new(m1, f1);
                        let b = CollisionFilter::new(m2, f2);
                        assert_eq!(l1.interacts_with(l2), a.allows(b), "{m1} {f1} {m2} {f2}");
                    }
                }
            }
        }
    }
}
