//! Continuous-time (event-driven) collision detection of moving spheres (3D) and circles (2D).
//!
//! Bodies fly with constant velocity between events inside a box with static walls; the
//! simulation jumps from one event (collision or wall hit) to the next, computed exactly from
//! the quadratic time of impact ([`time_of_impact`]) and resolved with an elastic impulse
//! ([`response`]). Nothing is ever missed or reordered. Three next-event finders
//! ([`Method`]) produce the same event sequence:
//!
//! - `all-pairs`: every pair at every event, O(n²) per event;
//! - `swept-bvh`: [Kaya16, Algorithm 4], a BVH over AABBs swept over `[now, now + Δt]`
//!   with an adaptive Δt;
//! - `calendar`: an event calendar with neighbour cells, O(log n) per event.
//!
//! Simultaneous events are ordered by [`Event::tie_key`]: collisions before wall hits, then by
//! object index, then by partner (or wall) index. All methods compute a pair's time from the
//! two bodies' stored states with the same arithmetic, so their times are bit-identical.
//!
//! [`run()`] runs a generated benchmark scene ([`SceneConfig`], [Kaya16, ch. 5.2])
//! and [`reproduce`] regenerates [Kaya16, Tables 5.1 and 5.2].
#![deny(missing_docs)]
// Loops over axes index several per-axis arrays in lock step; indices read clearer there.
#![allow(clippy::needless_range_loop)]

mod all_pairs;
mod body;
mod calendar;
mod cell_grid;
pub mod discrete;
mod earliest_collision;
mod error;
mod event;
mod event_queue;
mod linked_lists;
pub mod reproduce;
pub mod response;
mod run;
mod scene;
mod simd;
mod simulation;
mod swept_bvh;
pub mod time_of_impact;
mod vector;
mod world;

pub use body::{Body, MassModel};
pub use error::{CcdError, EventText};
pub use event::{Event, EventKind};
pub use run::{run, RunConfig, RunReport};
pub use scene::{generate_scene, SceneConfig};
pub use simulation::{FinderOptions, Method, Simulation};
pub use swept_bvh::SweptBvhOptions;
pub use vector::Vec3;
pub use world::{World, MAX_MAGNITUDE, MIN_MAGNITUDE};
