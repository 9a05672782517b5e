//! [`SceneBuilder`]: a scene file with command-line overrides, checked when built.

use std::path::Path;

use super::error::toml_error;
use super::{Scene, SceneError, MAX_SCENE_BYTES};

/// Parses a command-line value as TOML (number, boolean), else as a string.
fn parse_value(value: &str) -> toml::Value {
    let value = value.trim();
    match toml::from_str::<toml::Table>(&format!("v = {value}")) {
        Ok(mut table) => table
            .remove("v")
            .unwrap_or(toml::Value::String(value.into())),
        Err(_) => toml::Value::String(value.to_string()),
    }
}

/// A scene being assembled from a file and overrides; [`SceneBuilder::build`] validates it.
#[derive(Debug, Clone, Default)]
pub struct SceneBuilder {
    table: toml::Table,
    source: Option<String>,
    text: Option<String>,
    /// Fields set by [`SceneBuilder::set`]: their errors are not the file's.
    overridden: Vec<String>,
}

impl SceneBuilder {
    /// Starts from the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts from a TOML text; checks names and types at once so that errors carry the
    /// file's line numbers (values are checked by [`SceneBuilder::build`], after overrides).
    pub fn from_toml_str(text: &str, source: &str) -> Result<Self, SceneError> {
        toml::from_str::<Scene>(text).map_err(|e| toml_error(&e, source, text))?;
        let table =
            toml::from_str::<toml::Table>(text).map_err(|e| toml_error(&e, source, text))?;
        Ok(Self {
            table,
            source: Some(source.to_string()),
            text: Some(text.to_string()),
            overridden: Vec::new(),
        })
    }

    /// Starts from a TOML file of at most [`MAX_SCENE_BYTES`].
    pub fn from_file(path: &Path) -> Result<Self, SceneError> {
        let source = path.display().to_string();
        let error = |message: String| SceneError {
            source: Some(source.clone()),
            line: None,
            field: None,
            message,
        };
        let size = std::fs::metadata(path)
            .map_err(|e| error(format!("cannot read: {e}")))?
            .len();
        if size > MAX_SCENE_BYTES {
            return Err(error(format!(
                "file too large for a scene ({size} bytes, at most {MAX_SCENE_BYTES})"
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|e| error(format!("cannot read: {e}")))?;
        Self::from_toml_str(&text, &source)
    }

    /// Sets `field` to `value` (a TOML literal or a bare string), replacing the file's value.
    ///
    /// `size_alpha_beta` sets both beta parameters (the size-uniformity sweep of
    /// [Zych16, ch. 4.2, Figs. 4.10–4.15]).
    pub fn set(&mut self, field: &str, value: &str) -> Result<&mut Self, SceneError> {
        let field = field.trim().replace('-', "_");
        if field == "size_alpha_beta" {
            self.set("size_alpha", value)?;
            return self.set("size_beta", value);
        }
        let value = typed_value(&field, parse_value(value))?;
        if !self.overridden.contains(&field) {
            self.overridden.push(field.clone());
        }
        self.table.insert(field, value);
        Ok(self)
    }

    /// The validated scene.
    pub fn build(&self) -> Result<Scene, SceneError> {
        let source = self.source.as_deref().unwrap_or("scene");
        let mut scene: Scene =
            toml::Value::Table(self.table.clone())
                .try_into()
                .map_err(|e: toml::de::Error| {
                    SceneError::field("?", e.message().trim().replace('\n', " "))
                        .located(source, None)
                })?;
        scene.validate().map_err(|e| {
            let from_override = e
                .field
                .as_ref()
                .is_some_and(|f| self.overridden.contains(f));
            if from_override {
                e
            } else {
                e.located(source, self.text.as_deref())
            }
        })?;
        scene.steps = scene.measured_steps();
        Ok(scene)
    }
}

/// Checks `value` against the type of `field` by deserializing a scene with that field alone.
fn probe(field: &str, value: &toml::Value) -> Result<(), toml::de::Error> {
    let mut table = toml::Table::new();
    table.insert(field.to_string(), value.clone());
    toml::Value::Table(table).try_into::<Scene>().map(|_| ())
}

/// `value` as `field`'s type takes it: a number written as an integer where the field is a
/// float, or a whole float where it is an integer, is converted. The field's type is the
/// scene struct's, asked through serde: there is no list of field types to keep in step.
fn typed_value(field: &str, value: toml::Value) -> Result<toml::Value, SceneError> {
    let refused = match probe(field, &value) {
        Ok(()) => return Ok(value),
        Err(e) => SceneError::field(field, e.message().trim().replace('\n', " ")),
    };
    let other = match value {
        toml::Value::Integer(i) => Some(toml::Value::Float(i as f64)),
        toml::Value::Float(x) if x.fract() == 0.0 && x.abs() < 9e15 => {
            Some(toml::Value::Integer(x as i64))
        }
        _ => None,
    };
    match other {
        Some(other) if probe(field, &other).is_ok() => Ok(other),
        _ => Err(refused),
    }
}
