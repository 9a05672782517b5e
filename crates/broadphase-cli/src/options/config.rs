//! An algorithm with its options as a small TOML file: what `recommend` writes and
//! `bench --config` loads.

use std::path::Path;

use anyhow::Context;
use broadphase::tree::{BvhBuild, DescendRule};
use broadphase::AlgorithmOptions;
use serde::{Deserialize, Serialize};

/// One configuration: an algorithm name and the options that differ from the defaults.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlgorithmConfig {
    /// A library algorithm (`broadphase::ALGORITHMS`).
    pub algorithm: String,
    /// `grid`: cell edge length (absent: automatic).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grid_cell_size: Option<f32>,
    /// `dynamic-tree`: leaf box margin (absent: the library's default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree_margin: Option<f32>,
    /// `bvh`: build strategy (median, sah, bottom-up, insertion).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bvh_build: Option<String>,
    /// `bvh`: descend rule (simultaneous, larger-volume).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bvh_descend: Option<String>,
}

impl AlgorithmConfig {
    /// The algorithm with its default options.
    pub fn plain(algorithm: &str) -> Self {
        Self {
            algorithm: algorithm.to_string(),
            ..Self::default()
        }
    }

    /// The library options; checks the name and every value.
    pub fn options(&self) -> anyhow::Result<AlgorithmOptions> {
        if !broadphase::ALGORITHMS.contains(&self.algorithm.as_str()) {
            anyhow::bail!(
                "unknown algorithm '{}' (known: {})",
                self.algorithm,
                broadphase::ALGORITHMS.join(", ")
            );
        }
        let mut options = AlgorithmOptions::default();
        options.grid.cell_size = self.grid_cell_size;
        if let Some(margin) = self.tree_margin {
            options.dynamic_tree.margin = margin;
        }
        if let Some(build) = &self.bvh_build {
            options.bvh.build = build.parse::<BvhBuild>().map_err(anyhow::Error::msg)?;
        }
        if let Some(rule) = &self.bvh_descend {
            options.bvh.descend = rule.parse::<DescendRule>().map_err(anyhow::Error::msg)?;
        }
        // Creating it checks the values (cell size, margin).
        broadphase::create(&self.algorithm, &options)?;
        Ok(options)
    }

    /// A short label: the name and the options set.
    pub fn label(&self) -> String {
        let mut parts = vec![self.algorithm.clone()];
        if let Some(size) = self.grid_cell_size {
            parts.push(format!("cell {size}"));
        }
        if let Some(margin) = self.tree_margin {
            parts.push(format!("margin {margin}"));
        }
        if let Some(build) = &self.bvh_build {
            parts.push(build.clone());
        }
        if let Some(rule) = &self.bvh_descend {
            parts.push(rule.clone());
        }
        parts.join(" ")
    }

    /// The Rust code that builds this configuration.
    pub fn rust_snippet(&self) -> String {
        let mut lines =
            vec!["let mut options = broadphase::AlgorithmOptions::default();".to_string()];
        if let Some(size) = self.grid_cell_size {
            lines.push(format!("options.grid.cell_size = Some({size:?});"));
        }
        if let Some(margin) = self.tree_margin {
            lines.push(format!("options.dynamic_tree.margin = {margin:?};"));
        }
        if let Some(build) = &self.bvh_build {
            lines.push(format!(
                "options.bvh.build = \"{build}\".parse().expect(\"a build strategy\");"
            ));
        }
        if let Some(rule) = &self.bvh_descend {
            lines.push(format!(
                "options.bvh.descend = \"{rule}\".parse().expect(\"a descend rule\");"
            ));
        }
        lines.push(format!(
            "let broad_phase = broadphase::create(\"{}\", &options)?;",
            self.algorithm
        ));
        lines.join("\n")
    }

    /// Reads and checks a configuration file.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let config: Self = toml::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{}: {}",
                path.display(),
                e.message().trim().replace('\n', " ")
            )
        })?;
        config
            .options()
            .with_context(|| format!("{}", path.display()))?;
        Ok(config)
    }

    /// The file's text: the configuration, with `header` lines as comments above it.
    pub fn to_file_text(&self, header: &[String]) -> String {
        let mut text = String::new();
        for line in header {
            text.push_str("# ");
            text.push_str(line);
            text.push('\n');
        }
        for line in self.rust_snippet().lines() {
            text.push_str("#     ");
            text.push_str(line);
            text.push('\n');
        }
        text.push_str(&toml::to_string(self).unwrap_or_default());
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_file_loads_back_and_bad_values_are_refused() {
        let config = AlgorithmConfig {
            algorithm: "bvh".into(),
            bvh_build: Some("sah".into()),
            bvh_descend: Some("larger-volume".into()),
            ..Default::default()
        };
        let text = config.to_file_text(&["made by a test".into()]);
        let back: AlgorithmConfig = toml::from_str(&text).unwrap();
        assert_eq!(back, config);
        assert_eq!(back.options().unwrap().bvh.build, BvhBuild::Sah);
        assert!(text.contains("broadphase::create(\"bvh\""));
        let bad = |text: &str| {
            toml::from_str::<AlgorithmConfig>(text)
                .map_err(|e| e.to_string())
                .and_then(|c| c.options().map_err(|e| e.to_string()))
        };
        assert!(bad("algorithm = \"nope\"").is_err());
        assert!(bad("algorithm = \"grid\"\ngrid_cell_size = -1.0").is_err());
        assert!(bad("algorithm = \"dynamic-tree\"\ntree_margin = nan").is_err());
        assert!(bad("algorithm = \"bvh\"\nbvh_build = \"fast\"").is_err());
        assert!(bad("algorithm = \"grid\"\ncolour = 1").is_err());
        assert!(bad("algorithm = \"grid\"\ngrid_cell_size = 2.5").is_ok());
    }
}
