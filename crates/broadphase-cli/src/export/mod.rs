//! The export layer: a command builds a [`Report`] (tables of values whose columns come from
//! [`quantity`]) and hands it to the [`Exporter`] of the format asked for. Files a command
//! writes (a sweep's CSV, Markdown summary and charts) go through the same exporters.

pub mod charts;
mod csv;
pub mod files;
mod json;
pub mod markdown;
pub mod quantity;
mod table;

use std::io::Write;

use clap::ValueEnum;

pub use quantity::{Column, Statistic};

/// Output format (the columns are named in docs/outputs.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns for people.
    Table,
    /// JSON for scripts.
    Json,
    /// CSV for spreadsheets and scripts.
    Csv,
    /// Markdown tables.
    Markdown,
}

impl Format {
    /// Whether the format is read by people (tables, Markdown) rather than programs.
    pub fn for_people(self) -> bool {
        matches!(self, Format::Table | Format::Markdown)
    }
}

/// Writes a report in one format.
pub trait Exporter {
    /// The report as text.
    fn export(&self, report: &Report) -> String;
}

/// The exporter of `format`.
pub fn exporter(format: Format) -> Box<dyn Exporter> {
    match format {
        Format::Table => Box::new(table::TableExporter),
        Format::Json => Box::new(json::JsonExporter),
        Format::Csv => Box::new(csv::CsvExporter),
        Format::Markdown => Box::new(markdown::MarkdownExporter),
    }
}

/// Writes `report` to `out` in `format`; the report's footer lines follow it for people, and
/// go to stderr for programs (so that stdout stays one JSON or CSV document).
pub fn emit(report: &Report, format: Format, out: &mut dyn Write) -> anyhow::Result<()> {
    write!(out, "{}", exporter(format).export(report))?;
    if !report.footer.is_empty() {
        if format.for_people() {
            writeln!(out)?;
            for line in &report.footer {
                writeln!(out, "{line}")?;
            }
        } else {
            for line in &report.footer {
                crate::console::note!("{line}");
            }
        }
    }
    Ok(())
}

/// One line saying the unit of each quantity among `fields` that has one, and what the
/// statistics are: `units: set_aabbs_ms, total_ms: ms per step; bytes_per_proxy: bytes; …`.
/// Taken from the quantity table, so the legend names every quantity as the columns do.
pub fn units_legend(fields: &[Field]) -> String {
    let mut units: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut statistics: Vec<Statistic> = Vec::new();
    for field in fields.iter().filter(|f| f.audience.shown(true)) {
        let quantity = field.column.quantity;
        if let Some(s) = field.column.statistic {
            if !statistics.contains(&s) {
                statistics.push(s);
            }
        }
        if quantity.unit.is_empty() {
            continue;
        }
        match units.iter_mut().find(|(unit, _)| *unit == quantity.unit) {
            Some((_, keys)) if keys.contains(&quantity.key) => {}
            Some((_, keys)) => keys.push(quantity.key),
            None => units.push((quantity.unit, vec![quantity.key])),
        }
    }
    let units: Vec<String> = units
        .iter()
        .map(|(unit, keys)| format!("{}: {unit}", keys.join(", ")))
        .collect();
    let statistics: Vec<&str> = statistics.iter().map(|s| s.suffix()).collect();
    format!(
        "units: {}; statistics over the measured steps: {}",
        units.join("; "),
        statistics.join(", ")
    )
}

/// One cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A name or a label.
    Text(String),
    /// A whole number.
    Int(u64),
    /// A measurement; NaN and infinities are written as missing.
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
    /// No value: `-` for people, `null` in JSON, empty in CSV.
    Missing,
    /// Nothing: an empty cell everywhere (`null` in JSON).
    Blank,
}

impl Value {
    /// A text cell.
    pub fn text(text: impl Into<String>) -> Self {
        Value::Text(text.into())
    }

    /// A count.
    pub fn int(n: usize) -> Self {
        Value::Int(n as u64)
    }

    /// `Float` or `Missing`.
    pub fn float_or_missing(x: Option<f64>) -> Self {
        x.map_or(Value::Missing, Value::Float)
    }

    /// `Int` or `Missing`.
    pub fn int_or_missing(n: Option<usize>) -> Self {
        n.map_or(Value::Missing, Value::int)
    }

    /// The cell as people read it: `kind`'s decimals, `-` when missing.
    pub fn for_people(&self, column: &Column) -> String {
        self.formatted(column.kind().decimals(), "-")
    }

    /// The cell in CSV: more decimals, empty when missing.
    pub fn for_csv(&self, column: &Column) -> String {
        self.formatted(column.kind().csv_decimals(), "")
    }

    fn formatted(&self, decimals: usize, missing: &str) -> String {
        match self {
            Value::Text(text) => text.clone(),
            Value::Int(n) => n.to_string(),
            // An empty sum is -0.0: written as 0.
            Value::Float(x) if x.is_finite() => format!("{:.decimals$}", x + 0.0),
            Value::Float(_) | Value::Missing => missing.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Blank => String::new(),
        }
    }
}

/// Who reads a column or a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// Every format.
    All,
    /// Tables and Markdown only.
    People,
    /// JSON and CSV only.
    Programs,
}

impl Audience {
    /// Whether a format of `for_people` shows it.
    pub fn shown(self, for_people: bool) -> bool {
        match self {
            Audience::All => true,
            Audience::People => for_people,
            Audience::Programs => !for_people,
        }
    }
}

/// A column of a table: the quantity, who reads it, and an optional group label (a text
/// table writes it above the group's columns).
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// What the column holds.
    pub column: Column,
    /// Who reads it.
    pub audience: Audience,
    /// The label above a run of columns (a phase's name).
    pub group: Option<String>,
}

impl Field {
    /// Shown only in JSON and CSV.
    pub fn for_programs(self) -> Self {
        Self {
            audience: Audience::Programs,
            ..self
        }
    }

    /// Under `group`.
    pub fn grouped(self, group: &str) -> Self {
        Self {
            group: Some(group.to_string()),
            ..self
        }
    }

    /// The column's key (with its group for Markdown headers).
    pub fn key(&self) -> String {
        self.column.key()
    }
}

impl From<Column> for Field {
    fn from(column: Column) -> Self {
        Self {
            column,
            audience: Audience::All,
            group: None,
        }
    }
}

/// A row: one value per field of its table, an optional note for people, and rows of the
/// table's child fields (a phased scene's phases).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    /// One value per field.
    pub values: Vec<Value>,
    /// Written after the row in tables and Markdown.
    pub note: Option<String>,
    /// Rows of [`Table::children`].
    pub children: Vec<Vec<Value>>,
}

impl From<Vec<Value>> for Row {
    fn from(values: Vec<Value>) -> Self {
        Self {
            values,
            ..Self::default()
        }
    }
}

/// Rows below each row of a table: a nested array in JSON, a second block in CSV.
#[derive(Debug, Clone, PartialEq)]
pub struct Children {
    /// The key of the nested array in JSON.
    pub name: &'static str,
    /// Their fields.
    pub fields: Vec<Field>,
    /// How many of the parent's first fields identify it (repeated in CSV's block).
    pub parent_keys: usize,
}

/// A table of a report.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Its key when a JSON document holds several.
    pub name: &'static str,
    /// A line above it for people.
    pub title: Option<String>,
    /// The columns.
    pub fields: Vec<Field>,
    /// The rows.
    pub rows: Vec<Row>,
    /// Who reads it.
    pub audience: Audience,
    /// One row written as `key value` lines (tables) or one object (JSON).
    pub record: bool,
    /// Rows below each row.
    pub children: Option<Children>,
}

impl Table {
    /// An empty table of `fields`, for every format.
    pub fn new(name: &'static str, fields: Vec<Field>) -> Self {
        Self {
            name,
            title: None,
            fields,
            rows: Vec::new(),
            audience: Audience::All,
            record: false,
            children: None,
        }
    }

    /// Adds a row (one value per field).
    pub fn push(&mut self, row: impl Into<Row>) {
        let row = row.into();
        debug_assert_eq!(row.values.len(), self.fields.len(), "{}", self.name);
        self.rows.push(row);
    }

    /// The fields and their indices that a format of `for_people` shows.
    pub fn shown_fields(&self, for_people: bool) -> Vec<(usize, &Field)> {
        self.fields
            .iter()
            .enumerate()
            .filter(|(_, f)| f.audience.shown(for_people))
            .collect()
    }
}

/// What a command outputs: settings of the whole run, tables, and closing lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Settings of the run (a JSON document's top-level keys, a line above the tables).
    pub meta: Vec<(Column, Value)>,
    /// The tables.
    pub tables: Vec<Table>,
    /// Lines after the tables (for people; stderr for programs).
    pub footer: Vec<String>,
}

impl Report {
    /// A report of one table.
    pub fn of(table: Table) -> Self {
        Self {
            tables: vec![table],
            ..Self::default()
        }
    }
}
