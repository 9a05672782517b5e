//! Reproductions (placeholder).
