//! One module per command: its flags, and its run as named steps that build a report for
//! [`crate::export`].

pub mod bench;
pub mod ccd;
pub mod prune;
pub mod recommend;
pub mod reproduce;
pub mod soak;
pub mod sweep;
pub mod verify;
