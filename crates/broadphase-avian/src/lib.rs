//! This library's broad phases as a drop-in broad phase for [avian3d](https://docs.rs/avian3d),
//! Bevy's physics engine.
//!
//! Replace avian's BVH broad phase with one line:
//!
//! ```no_run
//! use avian3d::prelude::*;
//! use bevy::prelude::*;
//! use broadphase_avian::BroadPhasePlugin;
//!
//! App::new().add_plugins((
//!     MinimalPlugins,
//!     TransformPlugin,
//!     PhysicsPlugins::default()
//!         .build()
//!         .disable::<BvhBroadPhasePlugin>()
//!         .add(BroadPhasePlugin::new("sort-and-sweep")),
//! ));
//! ```
//!
//! With [`CollisionHooks`], disable `BvhBroadPhasePlugin<H>` and add
//! `BroadPhasePlugin::<H>::with_hooks(..)` the same way.
//!
//! # What it produces
//!
//! Each step, in [`BroadPhaseSystems::CollectCollisions`], the plugin adds to the
//! [`ContactGraph`] an edge for every pair of colliders whose [`EnlargedAabb`]s overlap
//! (closed boxes) and that avian's rules allow, unless the edge exists: the rules of avian's
//! own `BvhBroadPhasePlugin`:
//!
//! - a collider never pairs with itself, nor with a collider of the same body (colliders
//!   without a body count as one body, as in avian);
//! - two colliders of static bodies pair only when one is a [`Sensor`];
//! - [`CollisionLayers`] must interact both ways;
//! - no pair between two bodies joined by a joint with collision disabled. When a joint
//!   allows collisions again (its `JointCollisionDisabled` removed, the joint despawned or
//!   given `JointDisabled`), the two bodies' overlapping pairs get their edges at the next
//!   step; avian's own broad phase waits until one of the boxes moves. A joint whose
//!   collisions become disabled without `JointCollisionDisabled` being added (a disabled
//!   joint enabled again) leaves the edges avian's narrow phase already holds, as with
//!   avian's own broad phase: only the observer of that component removes them;
//! - [`CollisionHooks::filter_pairs`] decides when either collider has
//!   [`ActiveCollisionHooks::FILTER_PAIRS`]. As in avian, it is asked when a pair begins and,
//!   for a pair it refused, again whenever one of the two boxes moves; a hook whose answer
//!   changes for a pair that has an edge does not remove the edge;
//! - colliders with [`ColliderDisabled`] or `Disabled`, and colliders whose box is not
//!   finite, are left out.
//!
//! Edges carry the same flags as avian's (contact events, contact modification, constraints
//! unless a sensor or a disabled body is involved). Avian's narrow phase removes an edge when
//! the enlarged boxes stop overlapping, which is exactly when the library's pair ends, so the
//! contact graph holds exactly the allowed overlapping pairs.
//!
//! Why the enlarged boxes rather than [`ColliderAabb`]: avian's narrow phase keeps an edge
//! while the *enlarged* boxes overlap and drops it only then (or for reasons of its own);
//! pairs of the tight boxes would leave edges that no broad phase pair backs, and removing
//! those edges here would duplicate the narrow phase's bookkeeping of touching contacts
//! (constraint graph, islands, collision events). The enlarged box also changes only when
//! the tight box leaves it, so most moving colliders cost no update.
//!
//! # What it reads each step
//!
//! Only the colliders that changed: those avian's collider trees list in
//! [`MovedProxies`](avian3d::collider_tree::MovedProxies) (an enlarged box that changed, a new
//! or re-enabled collider, a new body or body type), and those its observers saw removed,
//! disabled, given other layers, made a sensor or not, or whose body was disabled. A resting
//! pile costs the plugin in proportion to what moved, not to the number of colliders. Like
//! avian's own broad phase, it relies on that moved set: code that writes an [`EnlargedAabb`]
//! itself must also insert the collider's proxy key into `MovedProxies`.
#![deny(missing_docs)]

mod proxies;
mod system;

use core::marker::PhantomData;

use avian3d::prelude::*;
use bevy::ecs::system::SystemParamItem;
use bevy::prelude::*;
use broadphase::{AlgorithmOptions, Error, ALGORITHMS};

#[doc(no_inline)]
pub use avian3d::collision::collider::EnlargedAabb;

/// The algorithm [`BroadPhasePlugin::default`] uses: the fastest of the library's on the
/// `pile` example while most bodies move; once most rest, `grid`, `dynamic-tree` or `sap` cost
/// less (see the README's measured figures).
pub const DEFAULT_ALGORITHM: &str = "sort-and-sweep";

/// Replaces avian3d's broad phase (`BvhBroadPhasePlugin<H>`) with one of this library's
/// algorithms, chosen by name (any of [`broadphase::ALGORITHMS`]).
///
/// `H` are the [`CollisionHooks`] whose `filter_pairs` decides pairs of colliders with
/// [`ActiveCollisionHooks::FILTER_PAIRS`], as for avian's own broad phase.
///
/// ```no_run
/// use avian3d::prelude::*;
/// use bevy::prelude::*;
/// use broadphase_avian::BroadPhasePlugin;
///
/// let mut app = App::new();
/// app.add_plugins((
///     MinimalPlugins,
///     TransformPlugin,
///     PhysicsPlugins::default()
///         .build()
///         .disable::<BvhBroadPhasePlugin>()
///         .add(BroadPhasePlugin::new("sort-and-sweep")),
/// ));
/// app.update();
/// ```
pub struct BroadPhasePlugin<H: CollisionHooks = ()> {
    algorithm: String,
    options: AlgorithmOptions,
    hooks: PhantomData<fn() -> H>,
}

impl BroadPhasePlugin {
    /// The plugin with algorithm `name`, without collision hooks.
    ///
    /// # Panics
    ///
    /// When `name` is not one of [`broadphase::ALGORITHMS`] (a programming error, reported
    /// with the list); [`BroadPhasePlugin::try_new`] returns it as an error instead.
    pub fn new(name: &str) -> Self {
        Self::with_hooks(name)
    }
}

impl<H: CollisionHooks> BroadPhasePlugin<H> {
    /// The plugin with algorithm `name` and collision hooks `H`
    /// (`BroadPhasePlugin::<H>::with_hooks(name)`).
    ///
    /// # Panics
    ///
    /// As [`BroadPhasePlugin::new`].
    pub fn with_hooks(name: &str) -> Self {
        match Self::try_new(name, AlgorithmOptions::default()) {
            Ok(plugin) => plugin,
            Err(error) => panic!("broadphase-avian: {error} (known: {ALGORITHMS:?})"),
        }
    }

    /// The plugin with algorithm `name` and its options, or the library's error when the name
    /// is unknown or the options are invalid.
    pub fn try_new(name: &str, options: AlgorithmOptions) -> Result<Self, Error> {
        broadphase::create(name, &options)?;
        Ok(Self {
            algorithm: name.to_owned(),
            options,
            hooks: PhantomData,
        })
    }

    /// The algorithm's name.
    pub fn algorithm(&self) -> &str {
        &self.algorithm
    }
}

impl<H: CollisionHooks> Default for BroadPhasePlugin<H> {
    fn default() -> Self {
        Self::with_hooks(DEFAULT_ALGORITHM)
    }
}

impl<H: CollisionHooks + 'static> Plugin for BroadPhasePlugin<H>
where
    for<'w, 's> SystemParamItem<'w, 's, H>: CollisionHooks,
{
    fn build(&self, app: &mut App) {
        // `try_new` checked the name and options; creating again cannot fail differently.
        let broad_phase = broadphase::create(&self.algorithm, &self.options)
            .unwrap_or_else(|error| panic!("broadphase-avian: {error}"));
        app.insert_resource(system::LibraryBroadPhase::new(broad_phase));
        system::add_observers(app);
        app.add_systems(
            PhysicsSchedule,
            system::collect_collision_pairs::<H>.in_set(BroadPhaseSystems::CollectCollisions),
        );
    }
}

pub use system::{LibraryBroadPhase, PhaseTimes};
