//! The scene file's fields, read from the `Scene` type itself (its serde field list), and a
//! one-line description of each for command-line help.

use serde::de::{self, Deserialize, Deserializer, Visitor};

use super::Scene;

/// A deserializer that only records the field names serde's derive hands to
/// `deserialize_struct`, then stops.
struct FieldNames<'a>(&'a mut &'static [&'static str]);

#[derive(Debug)]
struct Stop;

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("field names read")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Stop
    }
}

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = Stop;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Stop> {
        *self.0 = fields;
        Err(Stop)
    }

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// The fields of a scene file, in the order of [`Scene`], `phases` last: the names serde
/// accepts, so they cannot drift from the struct.
pub fn scene_fields() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    let _ = Scene::deserialize(FieldNames(&mut fields));
    fields
}

/// One line on each field of [`scene_fields`] (the struct's documentation, shortened, without
/// a final period), for command-line help; `phases` only exists in files.
pub fn field_help(field: &str) -> Option<&'static str> {
    FIELD_HELP
        .iter()
        .find(|(name, _)| *name == field)
        .map(|(_, help)| *help)
}

const FIELD_HELP: &[(&str, &str)] = &[
    ("objects", "Number of objects (moving plus stationary)"),
    (
        "density",
        "Objects per unit volume (sets the world cube's side)",
    ),
    ("world_size", "Side of the world cube (overrides density)"),
    (
        "size_distribution",
        "beta, normal, inverse-normal, uniform or fixed",
    ),
    ("size_min", "Smallest object extent"),
    ("size_max", "Largest object extent"),
    ("size_alpha", "α of the beta size distribution"),
    ("size_beta", "β of the beta size distribution"),
    (
        "size_mean",
        "Mean size of the normal distributions (and the fixed size)",
    ),
    (
        "size_std",
        "Standard deviation of the normal size distributions",
    ),
    (
        "shapes",
        "Comma-separated shapes: sphere, box, capsule, cylinder, cone, or all",
    ),
    ("mean_speed", "Mean speed, units per second"),
    ("speed_distribution", "uniform (0 to 2 × mean) or fixed"),
    (
        "redraw_interval",
        "Re-draw velocities every N steps (0: never)",
    ),
    ("time_step", "Seconds per step"),
    (
        "stationary_fraction",
        "Fraction of objects that never move (static proxies)",
    ),
    ("gravity", "Gravity (units/s²); adds a static ground"),
    ("terrain_boxes", "Number of static terrain boxes"),
    (
        "sphere_bounces",
        "Elastic sphere–sphere bounces (true/false)",
    ),
    (
        "remove_rate",
        "Fraction of moving objects removed and re-inserted per step",
    ),
    (
        "teleport_rate",
        "Fraction of moving objects teleported per step",
    ),
    ("seed", "Random seed"),
    ("warmup", "Unmeasured steps before the measured ones"),
    ("steps", "Measured steps"),
    (
        "sleep_speed",
        "Speed below which an object resting on the ground falls asleep (0: never)",
    ),
    (
        "phases",
        "Segments of the measured steps that change settings ([[phases]] tables)",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_field_list_is_the_structs_and_every_field_has_help() {
        let fields = scene_fields();
        assert_eq!(fields.first(), Some(&"objects"));
        assert_eq!(fields.last(), Some(&"phases"));
        // Every field of a written scene (options set so that none is skipped).
        let scene = Scene {
            world_size: Some(100.0),
            size_mean: Some(1.0),
            size_std: Some(0.5),
            ..Scene::default()
        };
        let written: toml::Table = toml::from_str(&scene.to_toml()).unwrap();
        let mut names: Vec<&str> = written.keys().map(String::as_str).collect();
        if !names.contains(&"phases") {
            names.push("phases");
        }
        names.sort_unstable();
        let mut listed = fields.to_vec();
        listed.sort_unstable();
        assert_eq!(names, listed);
        let helped: Vec<&str> = FIELD_HELP.iter().map(|(name, _)| *name).collect();
        assert_eq!(helped, fields, "FIELD_HELP must follow the struct");
    }
}
