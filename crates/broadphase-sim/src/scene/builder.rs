//! Building a scene from a file and flag overrides, validated as a whole.

use std::path::Path;

use super::error::{parse_value, toml_error};
use super::{Scene, SceneError, MAX_SCENE_BYTES};

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
    /// `size_alpha_beta` sets both beta parameters (the size-uniformity sweep of [Zych16, ch. 4]).
    pub fn set(&mut self, field: &str, value: &str) -> Result<&mut Self, SceneError> {
        let field = field.trim().replace('-', "_");
        if field == "size_alpha_beta" {
            self.set("size_alpha", value)?;
            return self.set("size_beta", value);
        }
        // The field's type is the scene's own: the value is tried as written, then as the other
        // number type (an integer where a float is expected, or an integral float where an
        // integer is), so no list of field types is kept beside the struct.
        let written = parse_value(value);
        let other = match written {
            toml::Value::Integer(i) => Some(toml::Value::Float(i as f64)),
            toml::Value::Float(x) if x.fract() == 0.0 && x.abs() < 9e15 => {
                Some(toml::Value::Integer(x as i64))
            }
            _ => None,
        };
        let probe = |value: &toml::Value| {
            let mut table = toml::Table::new();
            table.insert(field.clone(), value.clone());
            toml::Value::Table(table).try_into::<Scene>()
        };
        let value = match probe(&written) {
            Ok(_) => written,
            Err(first) => match other.filter(|v| probe(v).is_ok()) {
                Some(converted) => converted,
                None => {
                    let message = first.message().trim().replace('\n', " ");
                    return Err(SceneError::field(&field, message));
                }
            },
        };
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
