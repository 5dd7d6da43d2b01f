//! An answer that its operation may also give in formats other than JSON (`answer_types` listing
//! `application/xml`, `text/html`, `text/csv`, …): the implementation gives the value (its output,
//! a page of it, or the enum of its answers) and how to render it in those formats, and the
//! platform renders it only when the request's `Accept` asks for one of them.

use std::fmt;

/// How an implementation renders an output in a media type other than JSON: the bytes, or
/// `None` where it does not render that one (the answer is then JSON, as RFC 9110 section 12.1
/// lets a server answer when it cannot give what `Accept` prefers).
pub type Render<T> = Box<dyn FnOnce(&T, &str) -> Option<Vec<u8>> + Send>;

/// An operation's answer, with the renderer of its other formats.
pub struct Formats<T> {
    /// The answer, given as JSON unless another format is asked for and rendered.
    pub value: T,
    pub(crate) render: Option<Render<T>>,
}

impl<T> Formats<T> {
    /// The output in JSON alone (a request asking only for another format gets JSON).
    pub fn json(value: T) -> Self {
        Formats { value, render: None }
    }

    /// The output, rendered by `render` when the request asks for another of the operation's
    /// formats (called with the output and that media type).
    pub fn rendered_by(value: T, render: impl FnOnce(&T, &str) -> Option<Vec<u8>> + Send + 'static) -> Self {
        Formats { value, render: Some(Box::new(render)) }
    }
}

impl<T: fmt::Debug> fmt::Debug for Formats<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Formats").field("value", &self.value).field("renders", &self.render.is_some()).finish()
    }
}

/// A renderer of one output in a media type, called at most once.
pub(crate) type RenderOnce = Box<dyn FnOnce(&str) -> Option<Vec<u8>> + Send>;

/// The other formats of a [`Formats`] once its JSON is written: renders the output in a media
/// type, at most once.
pub struct Other(pub(crate) RenderOnce);

impl fmt::Debug for Other {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Other(..)")
    }
}
