// Package dist holds the number generators of the YCSB core workload: the
// request distributions (uniform, zipfian, scrambled zipfian, latest,
// hotspot, exponential, sequential), the insert-key counters (plain and
// acknowledged) and the discrete operation chooser. Each follows the
// behaviour of the YCSB class of the same name (site.ycsb.generator.*),
// including its quirks, so a Cairn run skews its keys the way YCSB does:
//
//   - ScrambledZipfian draws from a Zipfian over a fixed 10^16 items with the
//     precomputed zeta 26.46902820178302 (constant 0.99) and folds the draw
//     into [min, max] with FNVHash64 modulo the item count. The item count
//     therefore never changes the skew, only which keys are hot.
//   - Zipfian.NextN with a larger item count extends zeta incrementally but
//     keeps computing eta from the item count it was built with, as YCSB does.
//     A smaller item count than the last one is used without recomputing.
//   - SkewedLatest returns last - Zipfian(last) over an AcknowledgedCounter,
//     so it favours the most recently acknowledged insert and never returns
//     key 0 of a fresh load.
//   - Hotspot's hot set is the first int(n*hotsetFraction) items.
//
// What is not copied is Java's random number stream: each thread draws from
// its own PCG (Rand), seeded by the caller. Distributions match YCSB, exact
// sequences do not.
//
// # Invariants
//
//   - Every Next returns a value inside the generator's documented range.
//   - FNVHash64 is bit-for-bit YCSB's Utils.fnvhash64 (a negative result is
//     possible only for the one input whose hash is math.MinInt64, as in Java).
//
// # Concurrency
//
// A Rand belongs to one goroutine. Generators that take the Rand as an
// argument and keep no other state (Uniform, Hotspot, Exponential,
// ScrambledZipfian, a Zipfian used only through Next, Discrete) are
// immutable after construction and may be shared by any number of
// goroutines. A Zipfian used through NextN with a growing count mutates its
// zeta, so SkewedLatest (which does that) must be one per goroutine.
// Counter, AcknowledgedCounter and Sequential are shared by design and safe
// for concurrent use; they use atomics (and, in Acknowledge, a try-lock).
//
// # Example
//
//	r := dist.NewRand(seed, uint64(thread))
//	keys := dist.NewScrambledZipfian(0, recordcount-1)
//	k := keys.Next(r)
package dist
