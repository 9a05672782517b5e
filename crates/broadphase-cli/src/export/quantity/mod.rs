//! The name of everything the workbench outputs, in one table. Every exporter (table, JSON,
//! CSV, Markdown), the charts and `docs/outputs.md` take their names from here, so a quantity
//! is called the same in every output.
//!
//! A column is a quantity, or a quantity and a statistic over the measured steps: its key is
//! `<quantity>_<statistic>` (`total_ms_median`, `possible_pairs_mean`). The first six
//! measured quantities are those of [Zych16, ch. 4.1]. `QUANTITIES` lists them all; a test
//! keeps `docs/outputs.md` equal to it.

mod table;

pub use table::*;

/// How a quantity's values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A name or a label (left-aligned in tables).
    Text,
    /// A whole number.
    Integer,
    /// Milliseconds.
    Millis,
    /// A mean count per step.
    Count,
    /// Bytes.
    Bytes,
    /// A ratio or a fitted exponent.
    Ratio,
    /// Nanoseconds.
    Nanos,
    /// Seconds.
    Seconds,
    /// Events per second.
    Rate,
    /// `true` or `false`.
    Flag,
}

impl Kind {
    /// Decimals in tables and Markdown.
    pub fn decimals(self) -> usize {
        match self {
            Kind::Millis => 3,
            Kind::Count | Kind::Nanos => 1,
            Kind::Ratio => 2,
            Kind::Seconds => 6,
            Kind::Text | Kind::Integer | Kind::Bytes | Kind::Rate | Kind::Flag => 0,
        }
    }

    /// Decimals in CSV (more than for people: the file is read by programs).
    pub fn csv_decimals(self) -> usize {
        match self {
            Kind::Millis | Kind::Seconds => 6,
            Kind::Count | Kind::Nanos => 3,
            Kind::Ratio => 4,
            Kind::Bytes | Kind::Rate => 1,
            Kind::Text | Kind::Integer | Kind::Flag => 0,
        }
    }
}

/// One quantity: its name in every output, its unit and what it is.
#[derive(Debug, PartialEq)]
pub struct Quantity {
    /// The name (with a statistic: the start of the name).
    pub key: &'static str,
    /// How values are written.
    pub kind: Kind,
    /// The unit, as axis labels and the documentation write it (empty: none).
    pub unit: &'static str,
    /// What it is, on one line.
    pub description: &'static str,
    /// Its name among the six measured quantities of [Zych16, ch. 4.1] (empty: not one).
    pub source_name: &'static str,
}

/// A statistic of a quantity over the measured steps (or runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statistic {
    /// The median.
    Median,
    /// The arithmetic mean.
    Mean,
    /// The 95th percentile.
    P95,
    /// The largest value.
    Max,
    /// The smallest value.
    Min,
    /// The sum.
    Sum,
    /// The exponent `k` of the median growing as `objects^k`.
    Exponent,
}

impl Statistic {
    /// Every statistic, in the order the documentation lists them.
    #[cfg(test)]
    pub const ALL: [Statistic; 7] = [
        Statistic::Median,
        Statistic::Mean,
        Statistic::P95,
        Statistic::Max,
        Statistic::Min,
        Statistic::Sum,
        Statistic::Exponent,
    ];

    /// The suffix of the column's key.
    pub fn suffix(self) -> &'static str {
        match self {
            Statistic::Median => "median",
            Statistic::Mean => "mean",
            Statistic::P95 => "p95",
            Statistic::Max => "max",
            Statistic::Min => "min",
            Statistic::Sum => "sum",
            Statistic::Exponent => "exponent",
        }
    }

    /// What the suffix means.
    #[cfg(test)]
    pub fn description(self) -> &'static str {
        match self {
            Statistic::Median => "median over the measured steps (prune: over the timed runs)",
            Statistic::Mean => "mean over the measured steps",
            Statistic::P95 => "95th percentile over the measured steps",
            Statistic::Max => "largest value over the measured steps",
            Statistic::Min => {
                "smallest value over the measured steps or timed runs; of a ratio (`vs_fastest`, `vs_complete_pairs`), the same ratio of the smallest times"
            }
            Statistic::Sum => "sum over the measured steps (of the phase, in a phase's row)",
            Statistic::Exponent => {
                "fitted k of median ∝ objects^k (least squares on log–log, object-count sweeps)"
            }
        }
    }
}

/// One column of an output: a quantity, with a statistic or alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Column {
    /// The quantity.
    pub quantity: &'static Quantity,
    /// The statistic, if the quantity is summarised over steps or runs.
    pub statistic: Option<Statistic>,
}

impl Column {
    /// The column's name in every output: `<quantity>` or `<quantity>_<statistic>`.
    pub fn key(&self) -> String {
        match self.statistic {
            Some(s) => format!("{}_{}", self.quantity.key, s.suffix()),
            None => self.quantity.key.to_string(),
        }
    }

    /// How its values are written (an exponent is a ratio whatever the quantity).
    pub fn kind(&self) -> Kind {
        match self.statistic {
            Some(Statistic::Exponent) => Kind::Ratio,
            _ => self.quantity.kind,
        }
    }

    /// The label of a chart axis: the key and the unit.
    pub fn axis_label(&self) -> String {
        match (self.statistic, self.quantity.unit) {
            (Some(Statistic::Exponent), _) | (_, "") => self.key(),
            (_, unit) => format!("{} ({unit})", self.key()),
        }
    }
}

impl Quantity {
    /// The quantity alone.
    pub const fn plain(&'static self) -> Column {
        Column {
            quantity: self,
            statistic: None,
        }
    }

    /// The quantity summarised by `statistic`.
    pub const fn with(&'static self, statistic: Statistic) -> Column {
        Column {
            quantity: self,
            statistic: Some(statistic),
        }
    }

    /// `<key>_median`.
    pub const fn median(&'static self) -> Column {
        self.with(Statistic::Median)
    }

    /// `<key>_mean`.
    pub const fn mean(&'static self) -> Column {
        self.with(Statistic::Mean)
    }
}

/// The quantity table as `docs/outputs.md` shows it (a Markdown table).
#[cfg(test)]
pub fn markdown_table() -> String {
    let mut text =
        String::from("| key | unit | [Zych16, ch. 4.1] | what it is |\n|---|---|---|---|\n");
    for q in QUANTITIES {
        text.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            q.key, q.unit, q.source_name, q.description
        ));
    }
    text
}

/// The statistics as `docs/outputs.md` shows them.
#[cfg(test)]
pub fn markdown_statistics() -> String {
    let mut text = String::from("| suffix | meaning |\n|---|---|\n");
    for s in Statistic::ALL {
        text.push_str(&format!("| `_{}` | {} |\n", s.suffix(), s.description()));
    }
    text
}

/// Whether `key` names a column: a quantity, or a quantity and a statistic.
#[cfg(test)]
pub fn is_known(key: &str) -> bool {
    QUANTITIES.iter().any(|q| {
        key == q.key
            || Statistic::ALL.iter().any(|s| {
                key.strip_suffix(s.suffix())
                    .and_then(|k| k.strip_suffix('_'))
                    == Some(q.key)
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_no_key_reads_as_another_with_a_statistic() {
        for (i, q) in QUANTITIES.iter().enumerate() {
            assert!(
                q.key
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit()),
                "{}",
                q.key
            );
            for other in &QUANTITIES[i + 1..] {
                assert_ne!(q.key, other.key);
            }
            for other in QUANTITIES.iter() {
                for s in Statistic::ALL {
                    assert_ne!(format!("{}_{}", other.key, s.suffix()), q.key);
                }
            }
        }
    }

    #[test]
    fn the_six_measured_quantities_of_the_source_are_named() {
        let named: Vec<&str> = QUANTITIES
            .iter()
            .filter(|q| !q.source_name.is_empty())
            .map(|q| q.key)
            .collect();
        assert_eq!(
            named,
            [
                "set_aabbs_ms",
                "update_ms",
                "narrow_ms",
                "total_ms",
                "possible_pairs",
                "actual_pairs"
            ]
        );
        assert_eq!(TOTAL_MS.median().key(), "total_ms_median");
        assert_eq!(
            TOTAL_MS.with(Statistic::P95).axis_label(),
            "total_ms_p95 (ms per step)"
        );
        assert!(is_known("possible_pairs_mean") && is_known("algorithm"));
        assert!(!is_known("broad_ms") && !is_known("pairs_mean"));
    }

    #[test]
    fn docs_outputs_md_lists_the_table_as_it_is() {
        let doc = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/outputs.md"
        ));
        let table = markdown_table();
        assert!(
            doc.contains(&table),
            "docs/outputs.md is out of date; its quantity table should read:\n{table}"
        );
        let statistics = markdown_statistics();
        assert!(
            doc.contains(&statistics),
            "docs/outputs.md is out of date; its statistics table should read:\n{statistics}"
        );
    }
}
