//! Every scene file in the repository's `scenes/` folder loads and validates, so the files
//! that `bench` and `scripts/peers.py` run stay in step with the scene format.

use std::path::Path;

use broadphase_sim::SceneBuilder;

#[test]
fn every_committed_scene_file_is_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the scenes folder") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let scene = SceneBuilder::from_file(&path)
                .and_then(|b| b.build())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(scene.objects > 0, "{}", path.display());
            names.push(path.file_stem().unwrap().to_string_lossy().into_owned());
        }
    }
    for kind in [
        "default",
        "settling-pile",
        "open-world",
        "static-90",
        "teleport",
        "small-game",
    ] {
        assert!(names.iter().any(|n| n == kind), "scenes/{kind}.toml");
    }
}
