//! Publish-ready: every crate of the workspace carries the metadata crates.io shows (and
//! `cargo publish` warns without), the licence it declares is in the repository, and the README
//! states the minimum Rust version the manifests declare.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn manifest(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    text.parse()
        .unwrap_or_else(|e| panic!("{path:?} is not TOML: {e}"))
}

/// The workspace's `[workspace.package]` table.
fn workspace_package() -> toml::Table {
    let root = manifest(&root().join("Cargo.toml"));
    root["workspace"]["package"]
        .as_table()
        .expect("[workspace.package]")
        .clone()
}

/// The crates of `[workspace] members`.
fn members() -> Vec<PathBuf> {
    let root_manifest = manifest(&root().join("Cargo.toml"));
    let members = root_manifest["workspace"]["members"]
        .as_array()
        .expect("members");
    assert!(members.len() >= 6, "{members:?}");
    members
        .iter()
        .map(|m| root().join(m.as_str().unwrap()).join("Cargo.toml"))
        .collect()
}

/// `field` of `package`, following `field.workspace = true` to `[workspace.package]`.
fn field(package: &toml::Table, workspace: &toml::Table, name: &str) -> Option<toml::Value> {
    let value = package.get(name)?;
    let inherited = value
        .as_table()
        .and_then(|t| t.get("workspace"))
        .and_then(toml::Value::as_bool)
        == Some(true);
    if inherited {
        workspace.get(name).cloned()
    } else {
        Some(value.clone())
    }
}

/// Categories crates.io accepts that fit these crates (a typo would be refused at publish).
const CATEGORIES: &[&str] = &[
    "algorithms",
    "command-line-utilities",
    "data-structures",
    "game-development",
    "mathematics",
    "science",
    "simulation",
    "visualization",
];

#[test]
fn every_crate_has_the_metadata_crates_io_shows() {
    let workspace = workspace_package();
    for path in members() {
        let manifest = manifest(&path);
        let package = manifest["package"].as_table().unwrap();
        for name in [
            "description",
            "documentation",
            "homepage",
            "repository",
            "readme",
            "license",
            "rust-version",
        ] {
            let value =
                field(package, &workspace, name).unwrap_or_else(|| panic!("{path:?}: no `{name}`"));
            let text = value
                .as_str()
                .unwrap_or_else(|| panic!("{path:?}: `{name}` is not a string"));
            assert!(!text.trim().is_empty(), "{path:?}: empty `{name}`");
            if ["documentation", "homepage", "repository"].contains(&name) {
                assert!(text.starts_with("https://"), "{path:?}: `{name}` = {text}");
            }
        }
        let readme = field(package, &workspace, "readme").unwrap();
        assert!(
            root().join(readme.as_str().unwrap()).is_file(),
            "{path:?}: readme {readme} (relative to the workspace) does not exist"
        );
        let keywords = field(package, &workspace, "keywords")
            .unwrap_or_else(|| panic!("{path:?}: no `keywords`"));
        let keywords = keywords.as_array().unwrap();
        assert!((1..=5).contains(&keywords.len()), "{path:?}: {keywords:?}");
        for k in keywords {
            let k = k.as_str().unwrap();
            assert!(
                k.len() <= 20
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
                "{path:?}: keyword `{k}` is one crates.io refuses"
            );
        }
        let categories = field(package, &workspace, "categories")
            .unwrap_or_else(|| panic!("{path:?}: no `categories`"));
        let categories = categories.as_array().unwrap();
        assert!((1..=5).contains(&categories.len()), "{path:?}");
        for c in categories {
            assert!(
                CATEGORIES.contains(&c.as_str().unwrap()),
                "{path:?}: category {c}"
            );
        }
    }
}

#[test]
fn the_declared_licences_are_in_the_repository() {
    let license = workspace_package()["license"].as_str().unwrap().to_string();
    assert_eq!(license, "MIT OR Apache-2.0");
    let mit = std::fs::read_to_string(root().join("LICENSE-MIT")).expect("LICENSE-MIT");
    assert!(mit.contains("Permission is hereby granted, free of charge"));
    assert!(mit.contains("the broadphase developers"));
    let apache = std::fs::read_to_string(root().join("LICENSE-APACHE")).expect("LICENSE-APACHE");
    assert!(apache.contains("Apache License") && apache.contains("Version 2.0, January 2004"));
    assert!(apache.contains("END OF TERMS AND CONDITIONS"));
}

#[test]
fn the_readme_states_the_minimum_rust_version_of_the_manifests() {
    let version = workspace_package()["rust-version"]
        .as_str()
        .unwrap()
        .to_string();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let stated = format!("Minimum supported Rust version: {version}");
    assert!(
        readme.contains(&stated),
        "README.md should say \"{stated}\""
    );
    let changelog = std::fs::read_to_string(root().join("CHANGELOG.md")).unwrap();
    assert!(changelog.contains("## Unreleased"));
}
