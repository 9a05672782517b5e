//! Line charts of a sweep (one line per algorithm) as SVG and PNG, with the bundled
//! DejaVu font so that no system font is needed. A chart draws one column of the quantity
//! table: the files are named by its key and the y axis by its key and unit.

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

use super::files::write_atomically_with;
use super::Column;

/// One chart's data: x positions (value index when categorical) and one series per line.
pub struct Chart<'a> {
    /// Title on top.
    pub title: String,
    /// Label of the x axis.
    pub x_label: &'a str,
    /// The column drawn: the file name and the y axis label.
    pub y: Column,
    /// Labels of the x values, in order.
    pub x_values: &'a [String],
    /// `(name, y per x value)`; NaN marks a missing point.
    pub series: Vec<(String, Vec<f64>)>,
}

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are the crate's bundled TTF: parsing cannot fail.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            dejavu::sans::regular(),
        );
    });
}

/// True when positive values span two decades or more: then the axis is logarithmic.
pub fn wants_log(values: impl IntoIterator<Item = f64>) -> bool {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for v in values {
        if !v.is_finite() {
            continue;
        }
        if v <= 0.0 {
            return false;
        }
        lo = lo.min(v);
        hi = hi.max(v);
    }
    hi > 0.0 && hi / lo >= 100.0
}

/// Writes `DIR/<key>.svg` and `DIR/<key>.png` (the key of the column drawn), each atomically.
pub fn write_chart(dir: &Path, chart: &Chart) -> anyhow::Result<()> {
    register_font();
    let stem = chart.y.key();
    write_atomically_with(&dir.join(format!("{stem}.svg")), |tmp| {
        draw(SVGBackend::new(tmp, (900, 560)).into_drawing_area(), chart)
    })?;
    write_atomically_with(&dir.join(format!("{stem}.png")), |tmp| {
        draw(
            BitMapBackend::new(tmp, (900, 560)).into_drawing_area(),
            chart,
        )
    })?;
    Ok(())
}

/// Three significant digits at most, no trailing zeros.
fn fmt_number(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e5 || v.abs() < 1e-3 {
        format!("{v:.0e}")
    } else {
        let decimals = (2 - v.abs().log10().floor() as i32).max(0) as usize;
        let s = format!("{v:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, chart: &Chart) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("drawing a chart: {e:?}");
    root.fill(&WHITE).map_err(err)?;
    let numeric: Option<Vec<f64>> = chart
        .x_values
        .iter()
        .map(|v| v.parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect();
    let log_x = numeric
        .as_ref()
        .is_some_and(|xs| wants_log(xs.iter().copied()));
    let xs: Vec<f64> = match &numeric {
        Some(xs) if log_x => xs.iter().map(|x| x.log10()).collect(),
        Some(xs) => xs.clone(),
        None => (0..chart.x_values.len()).map(|i| i as f64).collect(),
    };
    let all_y = chart.series.iter().flat_map(|(_, ys)| ys.iter().copied());
    let log_y = wants_log(all_y.clone());
    let ty = |y: f64| if log_y { y.log10() } else { y };
    let ys: Vec<f64> = all_y.filter(|y| y.is_finite()).map(ty).collect();
    let (mut x0, mut x1) = min_max(&xs);
    let (mut y0, mut y1) = min_max(&ys);
    if !log_y {
        y0 = y0.min(0.0);
    }
    let pad = |a: &mut f64, b: &mut f64, frac: f64| {
        let span = (*b - *a).max(1e-9);
        *a -= span * frac;
        *b += span * frac;
    };
    pad(&mut x0, &mut x1, 0.04);
    pad(&mut y0, &mut y1, 0.06);

    let categories = chart.x_values;
    let x_fmt = |x: &f64| -> String {
        match &numeric {
            Some(_) if log_x => fmt_number(10f64.powf(*x)),
            Some(_) => fmt_number(*x),
            None => {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < categories.len() {
                    categories[i as usize].clone()
                } else {
                    String::new()
                }
            }
        }
    };
    let y_fmt = |y: &f64| {
        if log_y {
            fmt_number(10f64.powf(*y))
        } else {
            fmt_number(*y)
        }
    };
    let mut ctx = ChartBuilder::on(&root)
        .caption(&chart.title, ("sans-serif", 22))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    let x_labels = if numeric.is_none() {
        categories.len().max(2)
    } else {
        8
    };
    ctx.configure_mesh()
        .x_desc(if log_x {
            format!("{} (log)", chart.x_label)
        } else {
            chart.x_label.to_string()
        })
        .y_desc(if log_y {
            format!("{} (log)", chart.y.axis_label())
        } else {
            chart.y.axis_label()
        })
        .x_labels(x_labels)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(err)?;
    for (k, (name, values)) in chart.series.iter().enumerate() {
        let color = Palette99::pick(k).to_rgba();
        let points: Vec<(f64, f64)> = xs
            .iter()
            .zip(values)
            .filter(|(_, y)| y.is_finite() && (!log_y || **y > 0.0))
            .map(|(x, y)| (*x, ty(*y)))
            .collect();
        ctx.draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(err)?
            .label(name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        ctx.draw_series(points.iter().map(|p| Circle::new(*p, 3, color.filled())))
            .map_err(err)?;
    }
    ctx.configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

fn min_max(values: &[f64]) -> (f64, f64) {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo.is_finite() && hi.is_finite() {
        (lo, hi)
    } else {
        (0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::quantity::{POSSIBLE_PAIRS, TOTAL_MS};
    use super::*;

    #[test]
    fn log_axes_only_for_two_decades_of_positive_values() {
        assert!(wants_log([1.0, 10.0, 100.0]));
        assert!(!wants_log([1.0, 99.0]));
        assert!(!wants_log([0.0, 1.0, 1000.0]));
        assert!(wants_log([0.5, f64::NAN, 50.0]));
    }

    #[test]
    fn tick_labels_have_three_significant_digits() {
        assert_eq!(fmt_number(31.6227), "31.6");
        assert_eq!(fmt_number(3.16227), "3.16");
        assert_eq!(fmt_number(0.316227), "0.316");
        assert_eq!(fmt_number(100.0), "100");
        assert_eq!(fmt_number(2500.0), "2500");
        assert_eq!(fmt_number(0.5), "0.5");
        assert_eq!(fmt_number(1e6), "1e6");
    }

    #[test]
    fn writes_svg_and_png() {
        let dir = std::env::temp_dir().join(format!("bp-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let xs = vec!["10".to_string(), "100".into(), "1000".into()];
        let chart = Chart {
            title: "t".into(),
            x_label: "objects",
            y: TOTAL_MS.median(),
            x_values: &xs,
            series: vec![
                ("a".into(), vec![1.0, 10.0, 100.0]),
                ("b".into(), vec![1.0, f64::NAN, 3.0]),
            ],
        };
        write_chart(&dir, &chart).unwrap();
        let svg = std::fs::read_to_string(dir.join("total_ms_median.svg")).unwrap();
        assert!(svg.contains("<svg") && svg.contains("objects"));
        assert!(svg.contains("total_ms_median (ms per step)"));
        let png = std::fs::read(dir.join("total_ms_median.png")).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        let cats = vec!["sphere".to_string(), "box".into()];
        let chart = Chart {
            x_values: &cats,
            series: vec![("a".into(), vec![1.0, 2.0])],
            ..chart
        };
        let chart = Chart {
            y: POSSIBLE_PAIRS.mean(),
            ..chart
        };
        write_chart(&dir, &chart).unwrap();
        assert!(dir.join("possible_pairs_mean.png").is_file());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
