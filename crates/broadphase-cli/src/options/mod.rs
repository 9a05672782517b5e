//! What commands read besides their own flags: algorithm names, configuration files, scenes,
//! and the memory the machine can give a run.

pub mod algorithms;
pub mod budget;
pub mod config;
pub mod duration;
pub mod scene;
