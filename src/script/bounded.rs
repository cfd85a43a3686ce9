//! [`Bounded`]: a vector whose length both generators keep at or below a bound, so a script never grows without
//! limit however many bytes the fuzzer hands over.

use arbitrary::Unstructured;
use proptest::prelude::{Strategy, any};
use proptest::strategy::BoxedStrategy;

/// A `Vec<T>` of at most `MAX` elements, generated the same way by `arbitrary` and by proptest.
///
/// `arbitrary` reads one length byte and takes it modulo `MAX + 1` (no bytes left: empty); proptest draws the length
/// uniformly from `0..=MAX` and shrinks by removing elements, then by shrinking the ones left.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bounded<T, const MAX: usize>(pub Vec<T>);

impl<T, const MAX: usize> Bounded<T, MAX> {
    /// An empty vector.
    pub fn empty() -> Self {
        Bounded(Vec::new())
    }
}

impl<'a, T: arbitrary::Arbitrary<'a>, const MAX: usize> arbitrary::Arbitrary<'a> for Bounded<T, MAX> {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let len = usize::from(u.arbitrary::<u8>()?) % (MAX + 1);
        (0..len).map(|_| T::arbitrary(u)).collect::<arbitrary::Result<Vec<T>>>().map(Bounded)
    }
}

impl<T: proptest::arbitrary::Arbitrary + 'static, const MAX: usize> proptest::arbitrary::Arbitrary for Bounded<T, MAX> {
    type Parameters = ();
    type Strategy = BoxedStrategy<Self>;

    fn arbitrary_with((): ()) -> Self::Strategy {
        proptest::collection::vec(any::<T>(), 0..=MAX).prop_map(Bounded).boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbitrary::Arbitrary;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    #[test]
    fn arbitrary_length_is_bounded_and_empty_without_bytes() {
        let mut u = Unstructured::new(&[]);
        assert_eq!(Bounded::<u8, 3>::arbitrary(&mut u).unwrap(), Bounded::empty());
        let data = [255u8; 64];
        let mut u = Unstructured::new(&data);
        assert_eq!(Bounded::<u8, 3>::arbitrary(&mut u).unwrap().0.len(), 255 % 4);
    }

    #[test]
    fn proptest_length_is_bounded() {
        let mut runner = TestRunner::deterministic();
        let strategy = any::<Bounded<u8, 3>>();
        for _ in 0..200 {
            assert!(strategy.new_tree(&mut runner).unwrap().current().0.len() <= 3);
        }
    }
}
