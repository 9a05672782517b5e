//! JSON: a report of one table is an array of objects (one object for a one-row record), keys
//! in column order; with settings or several tables, one object holding them.

use super::{Exporter, Field, Report, Table, Value};

/// JSON documents.
pub struct JsonExporter;

/// A JSON value whose objects keep their keys in order.
enum Json {
    Leaf(serde_json::Value),
    Object(Vec<(String, Json)>),
    Array(Vec<Json>),
}

impl Json {
    fn write(&self, indent: usize, out: &mut String) {
        let inner = "  ".repeat(indent + 1);
        match self {
            Json::Leaf(value) => out.push_str(&value.to_string()),
            Json::Array(items) if items.is_empty() => out.push_str("[]"),
            Json::Object(entries) if entries.is_empty() => out.push_str("{}"),
            Json::Array(items) => {
                out.push_str("[\n");
                for (k, item) in items.iter().enumerate() {
                    out.push_str(&inner);
                    item.write(indent + 1, out);
                    out.push_str(if k + 1 < items.len() { ",\n" } else { "\n" });
                }
                out.push_str(&"  ".repeat(indent));
                out.push(']');
            }
            Json::Object(entries) => {
                out.push_str("{\n");
                for (k, (key, value)) in entries.iter().enumerate() {
                    out.push_str(&inner);
                    out.push_str(&serde_json::Value::String(key.clone()).to_string());
                    out.push_str(": ");
                    value.write(indent + 1, out);
                    out.push_str(if k + 1 < entries.len() { ",\n" } else { "\n" });
                }
                out.push_str(&"  ".repeat(indent));
                out.push('}');
            }
        }
    }
}

fn leaf(value: &Value) -> Json {
    Json::Leaf(match value {
        Value::Text(text) => serde_json::Value::String(text.clone()),
        Value::Int(n) => serde_json::Value::from(*n),
        Value::Float(x) => serde_json::Number::from_f64(*x)
            .map_or(serde_json::Value::Null, serde_json::Value::Number),
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Missing | Value::Blank => serde_json::Value::Null,
    })
}

fn object(fields: &[Field], values: &[Value]) -> Vec<(String, Json)> {
    fields
        .iter()
        .zip(values)
        .filter(|(f, _)| f.audience.shown(false))
        .map(|(f, v)| (f.key(), leaf(v)))
        .collect()
}

fn table_json(table: &Table) -> Json {
    let rows: Vec<Json> = table
        .rows
        .iter()
        .map(|row| {
            let mut entries = object(&table.fields, &row.values);
            if let Some(children) = &table.children {
                let nested = row
                    .children
                    .iter()
                    .map(|values| Json::Object(object(&children.fields, values)))
                    .collect();
                entries.push((children.name.to_string(), Json::Array(nested)));
            }
            Json::Object(entries)
        })
        .collect();
    match (table.record, rows.len()) {
        (true, 1) => rows.into_iter().next().expect("one row"),
        _ => Json::Array(rows),
    }
}

impl Exporter for JsonExporter {
    fn export(&self, report: &Report) -> String {
        let tables: Vec<&Table> = report
            .tables
            .iter()
            .filter(|t| t.audience.shown(false))
            .collect();
        let document = match tables.as_slice() {
            [table] if report.meta.is_empty() => table_json(table),
            _ => Json::Object(
                report
                    .meta
                    .iter()
                    .map(|(column, value)| (column.key(), leaf(value)))
                    .chain(tables.iter().map(|t| (t.name.to_string(), table_json(t))))
                    .collect(),
            ),
        };
        let mut out = String::new();
        document.write(0, &mut out);
        out.push('\n');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::quantity::{ALGORITHM, OBJECTS, PHASE, TOTAL_MS, WORKLOAD};
    use super::super::{Children, Statistic};
    use super::*;

    #[test]
    fn rows_keep_column_order_and_nest_children() {
        let mut table = Table::new(
            "rows",
            vec![
                ALGORITHM.plain().into(),
                OBJECTS.plain().into(),
                TOTAL_MS.median().into(),
            ],
        );
        table.children = Some(Children {
            name: "phases",
            fields: vec![PHASE.plain().into(), TOTAL_MS.with(Statistic::Sum).into()],
            parent_keys: 2,
        });
        let mut row: super::super::Row =
            vec![Value::text("sap"), Value::Int(10), Value::Float(f64::NAN)].into();
        row.children = vec![vec![Value::text("calm"), Value::Float(2.5)]];
        table.push(row);
        let text = JsonExporter.export(&Report::of(table.clone()));
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back[0]["algorithm"], "sap");
        assert!(back[0]["total_ms_median"].is_null());
        assert_eq!(back[0]["phases"][0]["total_ms_sum"], 2.5);
        assert!(text.find("algorithm").unwrap() < text.find("objects").unwrap());
        let report = Report {
            meta: vec![(WORKLOAD.plain(), Value::text("cube"))],
            ..Report::of(table)
        };
        let back: serde_json::Value = serde_json::from_str(&JsonExporter.export(&report)).unwrap();
        assert_eq!(back["workload"], "cube");
        assert_eq!(back["rows"][0]["objects"], 10);
    }
}
