//! Markdown: each table for people as a GitHub table whose header cells are the column keys
//! (after the group label, if any); numbers right-aligned.

use super::quantity::{Kind, NOTE};
use super::{Exporter, Report, Table};

/// Markdown text.
pub struct MarkdownExporter;

fn escape(text: &str) -> String {
    text.replace('|', "\\|")
}

/// One table (without its title).
pub fn table(table: &Table) -> String {
    let fields = table.shown_fields(true);
    let notes = table.rows.iter().any(|r| r.note.is_some());
    let mut header: Vec<String> = fields
        .iter()
        .map(|(_, f)| match &f.group {
            Some(group) => format!("{} {}", escape(group), f.key()),
            None => f.key(),
        })
        .collect();
    let mut align: Vec<&str> = fields
        .iter()
        .map(|(_, f)| {
            if f.column.kind() == Kind::Text {
                "---"
            } else {
                "---:"
            }
        })
        .collect();
    if notes {
        header.push(NOTE.key.to_string());
        align.push("---");
    }
    let mut text = format!("| {} |\n|{}|\n", header.join(" | "), align.join("|"));
    for row in &table.rows {
        let mut cells: Vec<String> = fields
            .iter()
            .map(|(i, f)| escape(&row.values[*i].for_people(&f.column)))
            .collect();
        if notes {
            cells.push(escape(row.note.as_deref().unwrap_or("")));
        }
        text.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    text
}

impl Exporter for MarkdownExporter {
    fn export(&self, report: &Report) -> String {
        let mut parts = Vec::new();
        if !report.meta.is_empty() {
            parts.push(
                report
                    .meta
                    .iter()
                    .map(|(c, v)| format!("- {}: {}\n", c.key(), escape(&v.for_people(c))))
                    .collect::<String>(),
            );
        }
        for t in report.tables.iter().filter(|t| t.audience.shown(true)) {
            let mut part = String::new();
            if let Some(title) = &t.title {
                part.push_str(&format!("### {title}\n\n"));
            }
            part.push_str(&table(t));
            parts.push(part);
        }
        parts.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::super::quantity::{ALGORITHM, TOTAL_MS};
    use super::super::{Row, Value};
    use super::*;

    #[test]
    fn keys_head_the_columns_and_notes_get_their_own() {
        let mut t = Table::new(
            "t",
            vec![ALGORITHM.plain().into(), TOTAL_MS.median().into()],
        );
        t.push(vec![Value::text("a|b"), Value::Float(0.5)]);
        let mut row: Row = vec![Value::text("c"), Value::Missing].into();
        row.note = Some("stopped".into());
        t.push(row);
        assert_eq!(
            table(&t),
            "| algorithm | total_ms_median | note |\n|---|---:|---|\n\
             | a\\|b | 0.500 |  |\n| c | - | stopped |\n"
        );
    }
}
