//! Discrete-time stepping (placeholder).
