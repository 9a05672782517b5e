//! Aligned text tables for the terminal. The header writes each column's key, the quantity
//! above its statistic (`total_ms` over `median`), under the group label if it has one.

use super::quantity::Kind;
use super::{Exporter, Field, Report, Table};

/// Text tables.
pub struct TableExporter;

/// Space between columns.
const GAP: &str = "  ";

impl Exporter for TableExporter {
    fn export(&self, report: &Report) -> String {
        let mut out = String::new();
        if !report.meta.is_empty() {
            let settings: Vec<String> = report
                .meta
                .iter()
                .map(|(column, value)| format!("{} {}", column.key(), value.for_people(column)))
                .collect();
            out.push_str(&settings.join(", "));
            out.push('\n');
        }
        for table in report.tables.iter().filter(|t| t.audience.shown(true)) {
            if !out.is_empty() {
                out.push('\n');
            }
            if let Some(title) = &table.title {
                out.push_str(title);
                out.push('\n');
            }
            if table.record {
                out.push_str(&record(table));
            } else {
                out.push_str(&grid(table));
            }
        }
        out
    }
}

fn width(text: &str) -> usize {
    text.chars().count()
}

fn pad(text: &str, width: usize, left: bool) -> String {
    let fill = " ".repeat(width.saturating_sub(self::width(text)));
    if left {
        format!("{text}{fill}")
    } else {
        format!("{fill}{text}")
    }
}

/// The two header lines of a column: the quantity's key, then the statistic (or nothing).
fn header_parts(field: &Field) -> (String, String) {
    match field.column.statistic {
        Some(s) => (
            field.column.quantity.key.to_string(),
            s.suffix().to_string(),
        ),
        None => (field.key(), String::new()),
    }
}

/// Writes `lines` with trailing spaces removed.
fn join_lines(lines: Vec<String>) -> String {
    lines
        .into_iter()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect()
}

/// One row as `key value` lines.
fn record(table: &Table) -> String {
    let fields = table.shown_fields(true);
    let key_width = fields
        .iter()
        .map(|(_, f)| width(&f.key()))
        .max()
        .unwrap_or(0);
    let mut lines = Vec::new();
    for row in &table.rows {
        for (i, field) in &fields {
            let value = row.values[*i].for_people(&field.column);
            lines.push(format!(
                "{}{GAP}{value}",
                pad(&field.key(), key_width, true)
            ));
        }
        if let Some(note) = &row.note {
            lines.push(note.clone());
        }
    }
    join_lines(lines)
}

/// Rows under a header, each column as wide as its widest cell.
fn grid(table: &Table) -> String {
    let fields = table.shown_fields(true);
    let headers: Vec<(String, String)> = fields.iter().map(|(_, f)| header_parts(f)).collect();
    let cells: Vec<Vec<String>> = table
        .rows
        .iter()
        .map(|row| {
            fields
                .iter()
                .map(|(i, f)| row.values[*i].for_people(&f.column))
                .collect()
        })
        .collect();
    let mut widths: Vec<usize> = headers
        .iter()
        .enumerate()
        .map(|(k, (top, bottom))| {
            cells
                .iter()
                .map(|row| width(&row[k]))
                .chain([width(top), width(bottom)])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let groups = group_runs(&fields);
    // A group label wider than its columns widens the group's last column.
    for (label, start, end) in &groups {
        let span: usize =
            widths[*start..*end].iter().sum::<usize>() + GAP.len() * (end - start - 1);
        widths[end - 1] += width(label).saturating_sub(span);
    }
    let left: Vec<bool> = fields
        .iter()
        .map(|(_, f)| f.column.kind() == Kind::Text)
        .collect();
    let line = |parts: &[String]| -> String {
        parts
            .iter()
            .enumerate()
            .map(|(k, text)| pad(text, widths[k], left[k]))
            .collect::<Vec<_>>()
            .join(GAP)
    };
    let mut lines = Vec::new();
    if groups.iter().any(|(label, _, _)| !label.is_empty()) {
        let mut text = String::new();
        let mut k = 0;
        for (label, start, end) in &groups {
            while k < *start {
                text.push_str(&" ".repeat(widths[k] + GAP.len()));
                k += 1;
            }
            let span: usize =
                widths[*start..*end].iter().sum::<usize>() + GAP.len() * (end - start - 1);
            text.push_str(&pad(label, span, false));
            text.push_str(GAP);
            k = *end;
        }
        lines.push(text);
    }
    let tops: Vec<String> = headers.iter().map(|(top, _)| top.clone()).collect();
    let bottoms: Vec<String> = headers.iter().map(|(_, bottom)| bottom.clone()).collect();
    lines.push(line(&tops));
    if bottoms.iter().any(|b| !b.is_empty()) {
        lines.push(line(&bottoms));
    }
    for (row, cells) in table.rows.iter().zip(&cells) {
        let mut text = line(cells);
        if let Some(note) = &row.note {
            text = format!("{}{GAP}{note}", text.trim_end());
        }
        lines.push(text);
    }
    join_lines(lines)
}

/// Runs of consecutive columns with the same group label: `(label, first, end)`; columns
/// without a group form runs with an empty label.
fn group_runs(fields: &[(usize, &Field)]) -> Vec<(String, usize, usize)> {
    let mut runs: Vec<(String, usize, usize)> = Vec::new();
    for (k, (_, field)) in fields.iter().enumerate() {
        let label = field.group.clone().unwrap_or_default();
        match runs.last_mut() {
            Some((last, _, end)) if *last == label && !label.is_empty() => *end = k + 1,
            _ => runs.push((label, k, k + 1)),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::super::quantity::{ALGORITHM, OBJECTS, TOTAL_MS};
    use super::super::{Statistic, Value};
    use super::*;

    #[test]
    fn headers_split_keys_and_columns_align() {
        let mut table = Table::new(
            "t",
            vec![
                ALGORITHM.plain().into(),
                OBJECTS.plain().into(),
                TOTAL_MS.median().into(),
                Field::from(TOTAL_MS.with(Statistic::Sum)).for_programs(),
            ],
        );
        table.push(vec![
            Value::text("sap"),
            Value::Int(500),
            Value::Float(1.23456),
            Value::Float(9.0),
        ]);
        let mut stopped: super::super::Row = vec![
            Value::text("brute-force"),
            Value::Int(500),
            Value::Missing,
            Value::Missing,
        ]
        .into();
        stopped.note = Some("(stopped at step 0)".into());
        table.push(stopped);
        let text = TableExporter.export(&Report::of(table));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "algorithm    objects  total_ms");
        assert_eq!(lines[1], "                        median");
        assert_eq!(lines[2], "sap              500     1.235");
        assert_eq!(
            lines[3],
            "brute-force      500         -  (stopped at step 0)"
        );
        assert_eq!(lines.len(), 4, "{text}");
    }

    #[test]
    fn group_labels_span_their_columns() {
        let fields = vec![
            ALGORITHM.plain().into(),
            Field::from(TOTAL_MS.with(Statistic::Sum)).grouped("calm (10 steps)"),
            Field::from(TOTAL_MS.with(Statistic::P95)).grouped("calm (10 steps)"),
        ];
        let mut table = Table::new("t", fields);
        table.push(vec![
            Value::text("sap"),
            Value::Float(1.0),
            Value::Float(2.0),
        ]);
        let text = TableExporter.export(&Report::of(table));
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].ends_with("calm (10 steps)"), "{text}");
        assert_eq!(width(lines[0]), width(lines[3]), "{text}");
    }
}
