//! CSV: one header line of column keys, then one line per row. The report's settings come
//! first on every line; a table's child rows (a phased scene's phases) form a second block,
//! after a blank line, led by the parent's identifying columns.

use super::{Column, Exporter, Field, Report, Table, Value};

/// CSV text.
pub struct CsvExporter;

/// A cell, quoted when it holds a comma, a quote or a line break.
fn cell(text: String) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

/// One block: header and lines.
fn block(columns: &[Column], rows: &[Vec<&Value>]) -> String {
    let mut text = columns
        .iter()
        .map(|c| cell(c.key()))
        .collect::<Vec<_>>()
        .join(",");
    text.push('\n');
    for row in rows {
        let line: Vec<String> = columns
            .iter()
            .zip(row)
            .map(|(c, v)| cell(v.for_csv(c)))
            .collect();
        text.push_str(&line.join(","));
        text.push('\n');
    }
    text
}

fn shown(fields: &[Field]) -> Vec<usize> {
    (0..fields.len())
        .filter(|&i| fields[i].audience.shown(false))
        .collect()
}

/// The table's block, and its children's block if it has any rows.
fn table_blocks(report: &Report, table: &Table) -> Vec<String> {
    let meta_columns: Vec<Column> = report.meta.iter().map(|(c, _)| *c).collect();
    let meta_values: Vec<&Value> = report.meta.iter().map(|(_, v)| v).collect();
    let own = shown(&table.fields);
    let mut columns = meta_columns.clone();
    columns.extend(own.iter().map(|&i| table.fields[i].column));
    let rows: Vec<Vec<&Value>> = table
        .rows
        .iter()
        .map(|row| {
            let mut values = meta_values.clone();
            values.extend(own.iter().map(|&i| &row.values[i]));
            values
        })
        .collect();
    let mut blocks = vec![block(&columns, &rows)];
    if let Some(children) = &table.children {
        if table.rows.iter().any(|r| !r.children.is_empty()) {
            let parent: Vec<usize> = own
                .iter()
                .copied()
                .filter(|&i| i < children.parent_keys)
                .collect();
            let theirs = shown(&children.fields);
            let mut columns = meta_columns;
            columns.extend(parent.iter().map(|&i| table.fields[i].column));
            columns.extend(theirs.iter().map(|&i| children.fields[i].column));
            let rows: Vec<Vec<&Value>> = table
                .rows
                .iter()
                .flat_map(|row| {
                    let meta_values = &meta_values;
                    let parent = &parent;
                    let theirs = &theirs;
                    row.children.iter().map(move |child| {
                        let mut values = meta_values.clone();
                        values.extend(parent.iter().map(|&i| &row.values[i]));
                        values.extend(theirs.iter().map(|&i| &child[i]));
                        values
                    })
                })
                .collect();
            blocks.push(block(&columns, &rows));
        }
    }
    blocks
}

impl Exporter for CsvExporter {
    fn export(&self, report: &Report) -> String {
        report
            .tables
            .iter()
            .filter(|t| t.audience.shown(false))
            .flat_map(|t| table_blocks(report, t))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::super::quantity::{ALGORITHM, CPU, OBJECTS, PHASE, TOTAL_MS};
    use super::super::{Children, Row, Statistic};
    use super::*;

    #[test]
    fn settings_lead_every_line_and_children_get_a_block() {
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
        let mut row: Row = vec![Value::text("sap"), Value::Int(10), Value::Missing].into();
        row.children = vec![vec![Value::text("calm, then wild"), Value::Float(2.5)]];
        table.push(row);
        let report = Report {
            meta: vec![(CPU.plain(), Value::text("A \"fast\" one"))],
            ..Report::of(table)
        };
        assert_eq!(
            CsvExporter.export(&report),
            "cpu,algorithm,objects,total_ms_median\n\
             \"A \"\"fast\"\" one\",sap,10,\n\
             \ncpu,algorithm,objects,phase,total_ms_sum\n\
             \"A \"\"fast\"\" one\",sap,10,\"calm, then wild\",2.500000\n"
        );
    }
}
