//! The page's files, embedded in the binary so that the viewer needs nothing beside it and
//! loads nothing from the network.

/// An embedded file.
pub(crate) struct Asset {
    pub(crate) body: &'static [u8],
    pub(crate) content_type: &'static str,
}

const HTML: &str = "text/html; charset=utf-8";
// Module scripts are refused by browsers unless served with a JavaScript type.
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// A page: the head both pages share (`assets/head.html`), then the page's file, which
/// starts with its title.
macro_rules! page {
    ($path:literal) => {
        concat!(
            include_str!("../assets/head.html"),
            include_str!(concat!("../assets", $path))
        )
        .as_bytes()
    };
}

macro_rules! assets {
    ($($path:literal => $type:expr $(, $page:ident)?;)*) => {
        /// Every served path with its file.
        const ASSETS: &[(&str, Asset)] = &[
            $(($path, Asset {
                body: assets!(@body $path $(, $page)?),
                content_type: $type,
            }),)*
        ];
    };
    (@body $path:literal) => { include_bytes!(concat!("../assets", $path)) };
    (@body $path:literal, page) => { page!($path) };
}

assets! {
    "/index.html" => HTML, page;
    "/ccd.html" => HTML, page;
    "/style.css" => CSS;
    "/js/camera.js" => JS;
    "/js/renderer.js" => JS;
    "/js/stream.js" => JS;
    "/js/controls.js" => JS;
    "/js/chart.js" => JS;
    "/js/view.js" => JS;
    "/js/ccd.js" => JS;
    "/js/ccd-draw.js" => JS;
    "/js/spheres.js" => JS;
}

/// The file served at `path`, if any.
pub(crate) fn get(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|(p, _)| *p == path).map(|(_, a)| a)
}

/// Every path the server answers with an embedded file.
pub fn paths() -> impl Iterator<Item = &'static str> {
    ASSETS.iter().map(|(p, _)| *p)
}
