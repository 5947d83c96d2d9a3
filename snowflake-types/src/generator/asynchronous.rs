//! Generation for async code (feature `tokio`): the slow path's attempts, awaited where
//! the blocking path would block the thread.

use std::time::Duration;

use super::Generator;
use super::slow::{Step, Waiting};
use crate::error::GenerateError;
use crate::layout::Layout;

impl Generator {
    /// [`Generator::take`] for async code: the same steps, awaiting where it would block.
    #[cold]
    #[inline(never)]
    async fn take_async(&self, want: u64) -> Result<(u64, u64), GenerateError> {
        let mut waiting = Waiting::default();
        loop {
            match self.take_step(want, &mut waiting)? {
                Step::Taken(first, count) => return Ok((first, count)),
                Step::NextTick => {
                    // Let the runtime's other tasks run first (one of them may be what moves
                    // the clock, or holds the next tick); then sleep, at the timer's
                    // resolution of a millisecond: about a tick.
                    waiting.spins = waiting.spins.saturating_add(1);
                    if waiting.spins < 64 {
                        tokio::task::yield_now().await;
                    } else {
                        tokio::time::sleep(Duration::from_micros(500)).await;
                    }
                }
                Step::Sleep(pause) => tokio::time::sleep(pause).await,
            }
        }
    }

    /// The next ID as a raw `i64`, for async code (feature `tokio`): the same hot path as
    /// [`Generator::next_raw`]; where that would block the thread (a spent sequence waiting
    /// for the next tick, a [`StepBack::Wait`](crate::StepBack::Wait) policy waiting for the clock), this awaits
    /// instead (`tokio::task::yield_now`, then `tokio::time::sleep`), so other tasks on the
    /// same runtime thread keep running. A high-water write (one `fsync` per reservation)
    /// still blocks, briefly.
    ///
    /// ```
    /// use typed_snowflake::{Generator, Layout};
    ///
    /// let generator = Generator::builder(Layout::new(41, 10, 12, 1_288_834_974_657)?).worker(3).build()?;
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
    /// let (a, b) = runtime.block_on(async {
    ///     Ok::<_, typed_snowflake::GenerateError>((generator.next_raw_async().await?, generator.next_raw_async().await?))
    /// })?;
    /// assert!(b > a);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn next_raw_async(&self) -> Result<i64, GenerateError> {
        self.next_with_async(&self.layout).await
    }

    /// [`Generator::next_raw_async`] with the layout as a constant, as [`Generator::next_with`].
    #[inline]
    pub(crate) async fn next_with_async(&self, layout: &Layout) -> Result<i64, GenerateError> {
        debug_assert_eq!(*layout, self.layout, "a generator serves only the layout it was built with");
        match self.fast(layout) {
            Some(raw) => Ok(raw),
            None => self.take_async(1).await.map(|(first, _)| self.raw_of(first)),
        }
    }
}
