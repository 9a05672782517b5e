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
    /// Values that grow as a power of x (an object-count sweep): both axes logarithmic
    /// whenever their values are all positive, so that a power law is a straight line.
    pub power_law: bool,
}

/// The legend's entry when every series has the same values (pair counts: every algorithm
/// is exact): one line instead of a dozen drawn over each other.
pub const ALL_AGREE: &str = "all algorithms agree";

/// Colours that stay apart for the common colour-vision deficiencies (Okabe and Ito's
/// palette, without its yellow, which is unreadable on white).
pub const PALETTE: [(u8, u8, u8); 7] = [
    (0, 0, 0),
    (230, 159, 0),
    (86, 180, 233),
    (0, 158, 115),
    (0, 114, 178),
    (213, 94, 0),
    (204, 121, 167),
];

/// Marker shapes: circle, triangle, square, cross.
const MARKERS: usize = 4;

/// The colour and marker of series `k`: colour `k mod 7`, marker `k mod 4`, so that no two of
/// the first 28 series look alike even without colour.
pub fn style_of(k: usize) -> ((u8, u8, u8), usize) {
    (PALETTE[k % PALETTE.len()], k % MARKERS)
}

/// `series`, or one series named [`ALL_AGREE`] when there are several and all are equal.
pub fn merge_identical(series: &[(String, Vec<f64>)]) -> Vec<(String, Vec<f64>)> {
    let same = |a: &[f64], b: &[f64]| {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| x == y || (x.is_nan() && y.is_nan()))
    };
    match series.first() {
        Some((_, first)) if series.len() > 1 && series.iter().all(|(_, ys)| same(ys, first)) => {
            vec![(ALL_AGREE.to_string(), first.clone())]
        }
        _ => series.to_vec(),
    }
}

/// How the x axis places its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XScale {
    /// At their values.
    Linear,
    /// At their logarithms.
    Log,
    /// Evenly, in order, each labelled with its value: names, or numbers that include zero
    /// and span decades (linear would draw 0 and 10 on top of each other, log has no 0).
    Even,
}

/// The x scale for `numeric` values (`None`: names).
pub fn x_scale(numeric: Option<&[f64]>, power_law: bool) -> XScale {
    let Some(xs) = numeric else {
        return XScale::Even;
    };
    let positive: Vec<f64> = xs.iter().copied().filter(|x| *x > 0.0).collect();
    if positive.len() == xs.len() {
        if (power_law && positive.len() > 1) || wants_log(positive) {
            XScale::Log
        } else {
            XScale::Linear
        }
    } else if wants_log(positive) {
        XScale::Even
    } else {
        XScale::Linear
    }
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

/// Chart size in pixels: the plot, and the legend to its right (outside the data).
const SIZE: (u32, u32) = (1100, 560);
const LEGEND_WIDTH: u32 = 230;

/// Writes `DIR/<key>.svg` and `DIR/<key>.png` (the key of the column drawn), each atomically.
pub fn write_chart(dir: &Path, chart: &Chart) -> anyhow::Result<()> {
    register_font();
    let stem = chart.y.key();
    write_atomically_with(&dir.join(format!("{stem}.svg")), |tmp| {
        draw(SVGBackend::new(tmp, SIZE).into_drawing_area(), chart)
    })?;
    write_atomically_with(&dir.join(format!("{stem}.png")), |tmp| {
        draw(BitMapBackend::new(tmp, SIZE).into_drawing_area(), chart)
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

/// The style of a marker: filled shapes, a stroked cross.
fn marker_style(color: RGBAColor, marker: usize) -> ShapeStyle {
    if marker == 3 {
        color.stroke_width(2)
    } else {
        color.filled()
    }
}

/// The marker `marker` of [`style_of`] at pixel `(x, y)`.
fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    marker: usize,
    color: RGBAColor,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let style = marker_style(color, marker);
    match marker {
        0 => area.draw(&Circle::new((x, y), 4, style)),
        1 => area.draw(&TriangleMarker::new((x, y), 5, style)),
        2 => area.draw(&Rectangle::new([(x - 4, y - 4), (x + 4, y + 4)], style)),
        _ => area.draw(&Cross::new((x, y), 4, style)),
    }
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, chart: &Chart) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("drawing a chart: {e:?}");
    root.fill(&WHITE).map_err(err)?;
    let (plot, legend) = root.split_horizontally(SIZE.0 - LEGEND_WIDTH);
    let series = merge_identical(&chart.series);
    let numeric: Option<Vec<f64>> = chart
        .x_values
        .iter()
        .map(|v| v.parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect();
    let scale = x_scale(numeric.as_deref(), chart.power_law);
    let xs: Vec<f64> = match (&numeric, scale) {
        (Some(xs), XScale::Log) => xs.iter().map(|x| x.log10()).collect(),
        (Some(xs), XScale::Linear) => xs.clone(),
        _ => (0..chart.x_values.len()).map(|i| i as f64).collect(),
    };
    let all_y: Vec<f64> = series
        .iter()
        .flat_map(|(_, ys)| ys.iter().copied())
        .filter(|y| y.is_finite())
        .collect();
    let all_positive = !all_y.is_empty() && all_y.iter().all(|y| *y > 0.0);
    let log_y = wants_log(all_y.iter().copied()) || (chart.power_law && all_positive);
    let ty = |y: f64| if log_y { y.log10() } else { y };
    let ys: Vec<f64> = all_y.iter().map(|y| ty(*y)).collect();
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

    let labels = chart.x_values;
    let x_fmt = |x: &f64| -> String {
        match scale {
            XScale::Log => fmt_number(10f64.powf(*x)),
            XScale::Linear => fmt_number(*x),
            XScale::Even => {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
                    labels[i as usize].clone()
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
    let mut ctx = ChartBuilder::on(&plot)
        .caption(&chart.title, ("sans-serif", 22))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    let x_desc = match scale {
        XScale::Log => format!("{} (log)", chart.x_label),
        XScale::Even if numeric.is_some() => format!("{} (values evenly spaced)", chart.x_label),
        _ => chart.x_label.to_string(),
    };
    ctx.configure_mesh()
        .x_desc(x_desc)
        .y_desc(if log_y {
            format!("{} (log)", chart.y.axis_label())
        } else {
            chart.y.axis_label()
        })
        .x_labels(if scale == XScale::Even {
            labels.len().max(2)
        } else {
            8
        })
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(err)?;
    for (k, (_, values)) in series.iter().enumerate() {
        let ((r, g, b), marker) = style_of(k);
        let color = RGBColor(r, g, b).to_rgba();
        let points: Vec<(f64, f64)> = xs
            .iter()
            .zip(values)
            .filter(|(_, y)| y.is_finite() && (!log_y || **y > 0.0))
            .map(|(x, y)| (*x, ty(*y)))
            .collect();
        ctx.draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(err)?;
        let area = ctx.plotting_area();
        for p in &points {
            let (px, py) = area.map_coordinate(p);
            let (dx, dy) = area.get_base_pixel();
            draw_marker(&area.strip_coord_spec(), (px - dx, py - dy), marker, color)
                .map_err(err)?;
        }
    }
    // The legend in its own column right of the plot: it never covers a point.
    for (k, (name, _)) in series.iter().enumerate() {
        let ((r, g, b), marker) = style_of(k);
        let color = RGBColor(r, g, b).to_rgba();
        let y = 60 + 24 * k as i32;
        legend
            .draw(&PathElement::new(
                vec![(8, y), (36, y)],
                color.stroke_width(2),
            ))
            .map_err(err)?;
        draw_marker(&legend, (22, y), marker, color).map_err(err)?;
        legend
            .draw(&Text::new(
                name.clone(),
                (44, y - 8),
                ("sans-serif", 15).into_font().color(&BLACK),
            ))
            .map_err(err)?;
    }
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
            power_law: false,
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

    #[test]
    fn identical_series_are_one_line_and_the_rest_stay() {
        let same = vec![
            ("a".to_string(), vec![1.0, f64::NAN]),
            ("b".into(), vec![1.0, f64::NAN]),
        ];
        assert_eq!(merge_identical(&same).len(), 1);
        assert_eq!(merge_identical(&same)[0].0, ALL_AGREE);
        let differ = vec![
            ("a".to_string(), vec![1.0, 2.0]),
            ("b".into(), vec![1.0, 3.0]),
        ];
        assert_eq!(merge_identical(&differ), differ);
        assert_eq!(merge_identical(&same[..1])[0].0, "a");
    }

    #[test]
    fn x_scales_separate_zero_and_make_power_laws_straight() {
        let speeds = [0.0, 10.0, 40.0, 160.0, 640.0, 2400.0];
        assert_eq!(x_scale(Some(&speeds), false), XScale::Even);
        assert_eq!(x_scale(Some(&[0.0, 0.2, 0.4]), false), XScale::Linear);
        let objects = [250.0, 500.0, 1000.0, 2000.0, 4000.0];
        assert_eq!(x_scale(Some(&objects), true), XScale::Log);
        assert_eq!(x_scale(Some(&objects), false), XScale::Linear);
        assert_eq!(x_scale(Some(&[1.0, 1000.0]), false), XScale::Log);
        assert_eq!(x_scale(None, false), XScale::Even);
    }

    #[test]
    fn series_styles_are_colour_blind_safe_and_distinct_without_colour() {
        let styles: Vec<_> = (0..13).map(style_of).collect();
        for (i, s) in styles.iter().enumerate() {
            assert!(
                !styles[i + 1..].contains(s),
                "series {i} looks like a later one"
            );
            assert!(PALETTE.contains(&s.0));
        }
        // Neighbours differ in both colour and marker.
        for w in styles.windows(2) {
            assert!(w[0].0 != w[1].0 && w[0].1 != w[1].1);
        }
        // No yellow: its blue channel low and red and green both high.
        assert!(PALETTE
            .iter()
            .all(|&(r, g, b)| !(r > 200 && g > 200 && b < 100)));
    }

    /// The `x` of every `<text>` whose content starts with `label`.
    fn text_x(svg: &str, label: &str) -> Vec<f64> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let (attributes, rest) = t.split_once('>')?;
                let content = rest[..rest.find('<')?].trim();
                let x = attributes.split("x=\"").nth(1)?;
                let x: f64 = x[..x.find('"')?].parse().ok()?;
                content.starts_with(label).then_some(x)
            })
            .collect()
    }

    /// The largest x of the lines drawn (polylines' points).
    fn max_line_x(svg: &str) -> f64 {
        svg.split("points=\"")
            .skip(1)
            .flat_map(|p| {
                p[..p.find('"').unwrap()]
                    .split_whitespace()
                    .map(|xy| xy.split(',').next().unwrap().parse::<f64>().unwrap())
                    .collect::<Vec<_>>()
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn rendered_charts_agree_once_keep_the_legend_off_the_data_and_log_log_counts() {
        let dir = std::env::temp_dir().join(format!("bp-chart-render-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let objects = vec![
            "250".to_string(),
            "500".into(),
            "1000".into(),
            "2000".into(),
        ];
        let names: Vec<String> = (0..13).map(|k| format!("algo{k}")).collect();
        let chart = Chart {
            title: "t".into(),
            x_label: "objects",
            y: POSSIBLE_PAIRS.mean(),
            x_values: &objects,
            series: names
                .iter()
                .map(|n| (n.clone(), vec![10.0, 20.0, 40.0, 80.0]))
                .collect(),
            power_law: true,
        };
        write_chart(&dir, &chart).unwrap();
        let svg = std::fs::read_to_string(dir.join("possible_pairs_mean.svg")).unwrap();
        assert_eq!(text_x(&svg, ALL_AGREE).len(), 1, "one legend entry");
        assert!(text_x(&svg, "algo").is_empty(), "no per-algorithm entry");
        assert!(svg.contains("objects (log)"));
        assert!(svg.contains("possible_pairs_mean (pairs per step) (log)"));
        // Different lines: every one in the legend, right of every point drawn.
        let chart = Chart {
            y: TOTAL_MS.median(),
            series: names
                .iter()
                .enumerate()
                .map(|(k, n)| (n.clone(), vec![1.0 + k as f64, 2.0, 4.0, 8.0 + k as f64]))
                .collect(),
            ..chart
        };
        write_chart(&dir, &chart).unwrap();
        let svg = std::fs::read_to_string(dir.join("total_ms_median.svg")).unwrap();
        let legend_x = text_x(&svg, "algo");
        assert_eq!(legend_x.len(), 13, "{svg}");
        let right_of_data = max_line_x(&svg);
        assert!(
            legend_x.iter().all(|&x| x > right_of_data),
            "{legend_x:?} vs {right_of_data}"
        );
        // A speed sweep from 0: 0 and 10 apart, evenly spaced.
        let speeds = vec!["0".to_string(), "10".into(), "40".into(), "2400".into()];
        let chart = Chart {
            x_label: "mean_speed",
            x_values: &speeds,
            power_law: false,
            ..chart
        };
        write_chart(&dir, &chart).unwrap();
        let svg = std::fs::read_to_string(dir.join("total_ms_median.svg")).unwrap();
        assert!(svg.contains("mean_speed (values evenly spaced)"), "{svg}");
        let label_x = |label: &str| -> Vec<f64> {
            svg.split("<text")
                .filter(|t| {
                    t.split_once('>')
                        .is_some_and(|(_, r)| r.trim_start().starts_with(&format!("{label}\n")))
                })
                .filter_map(|t| t.split("x=\"").nth(1)?.split('"').next()?.parse().ok())
                .collect()
        };
        // The x axis's labels (the y axis's sit left of the plot, within its label area).
        let on_x_axis =
            |xs: Vec<f64>| -> Vec<f64> { xs.into_iter().filter(|x| *x > 84.0).collect() };
        let (zero, ten) = (on_x_axis(label_x("0")), on_x_axis(label_x("10")));
        assert!(!zero.is_empty() && !ten.is_empty(), "{svg}");
        assert!((ten[0] - zero[0]).abs() > 50.0, "{zero:?} {ten:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
