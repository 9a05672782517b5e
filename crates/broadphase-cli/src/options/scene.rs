//! Scene flags shared by `bench`, `sweep` and `recommend`: a TOML file, then one flag per
//! scene field overriding it. The flags are made from the scene's own field list
//! ([`broadphase_sim::scene_fields`]), so a new field gets its flag without a copy here.

use std::path::PathBuf;

use broadphase_sim::{field_help, scene_fields, SceneBuilder};
use clap::{Arg, ArgAction, ArgMatches, Command};

/// Fields without a flag here: `objects` is each command's own flag, `phases` only exists in
/// files.
const NOT_FLAGS: [&str; 2] = ["objects", "phases"];

/// A scene: `--scene FILE` plus any field as a flag (flags win over the file).
#[derive(Debug, Default, Clone)]
pub struct SceneArgs {
    /// The scene file.
    pub scene: Option<PathBuf>,
    /// `(field, value)` for every field flag given, in the fields' order.
    pub overrides: Vec<(&'static str, String)>,
}

/// The scene fields that have a flag.
fn flag_fields() -> impl Iterator<Item = &'static str> {
    scene_fields()
        .iter()
        .copied()
        .filter(|f| !NOT_FLAGS.contains(f))
}

impl clap::Args for SceneArgs {
    fn augment_args(cmd: Command) -> Command {
        let cmd = cmd.arg(
            Arg::new("scene")
                .long("scene")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .action(ArgAction::Set)
                .help("Scene description (TOML) whose fields the flags below override"),
        );
        flag_fields().fold(cmd, |cmd, field| {
            cmd.arg(
                Arg::new(field)
                    .long(field.replace('_', "-"))
                    .value_name(field.to_uppercase())
                    .action(ArgAction::Set)
                    .help(field_help(field).unwrap_or("A scene field.")),
            )
        })
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for SceneArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self {
            scene: matches.get_one::<PathBuf>("scene").cloned(),
            overrides: flag_fields()
                .filter_map(|field| {
                    matches
                        .get_one::<String>(field)
                        .map(|value| (field, value.clone()))
                })
                .collect(),
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        let update = Self::from_arg_matches(matches)?;
        if update.scene.is_some() {
            self.scene = update.scene;
        }
        for (field, value) in update.overrides {
            self.overrides.retain(|(f, _)| *f != field);
            self.overrides.push((field, value));
        }
        Ok(())
    }
}

impl SceneArgs {
    /// The file's scene (or the defaults) with the flags applied; `defaults` are applied
    /// first when there is no file (the command's own interactive defaults).
    pub fn builder(&self, defaults: &[(&str, &str)]) -> anyhow::Result<SceneBuilder> {
        let mut builder = match &self.scene {
            Some(path) => SceneBuilder::from_file(path)?,
            None => {
                let mut b = SceneBuilder::new();
                for (field, value) in defaults {
                    b.set(field, value)?;
                }
                b
            }
        };
        for (field, value) in &self.overrides {
            builder
                .set(field, value)
                .map_err(|e| anyhow::anyhow!("--{}: {e}", field.replace('_', "-")))?;
        }
        Ok(builder)
    }

    /// A scene's error, led by the flag that set the field it names (`--mean-speed: field
    /// `mean_speed`: …`), so that a bad flag value is reported against the flag.
    pub fn explain(&self, error: impl std::fmt::Display) -> anyhow::Error {
        let text = error.to_string();
        match self
            .overrides
            .iter()
            .find(|(field, _)| text.contains(&format!("field `{field}`")))
        {
            Some((field, _)) => anyhow::anyhow!("--{}: {text}", field.replace('_', "-")),
            None => anyhow::anyhow!("{text}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        scene: SceneArgs,
    }

    #[test]
    fn every_scene_field_but_objects_and_phases_is_a_flag() {
        let command = <Wrapper as clap::CommandFactory>::command();
        let flags: Vec<&str> = command
            .get_arguments()
            .filter_map(|a| a.get_long())
            .collect();
        for field in scene_fields() {
            let flag = field.replace('_', "-");
            assert_eq!(
                flags.contains(&flag.as_str()),
                !NOT_FLAGS.contains(field),
                "{field}"
            );
        }
        let parsed = Wrapper::try_parse_from(["w", "--mean-speed", "4", "--scene", "s.toml"])
            .unwrap()
            .scene;
        assert_eq!(parsed.overrides, vec![("mean_speed", "4".to_string())]);
        assert_eq!(parsed.scene, Some(PathBuf::from("s.toml")));
        assert!(Wrapper::try_parse_from(["w", "--objects", "4"]).is_err());
    }
}
