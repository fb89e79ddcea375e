;; The search index's word-wise passes that JavaScript runs a word at a time, four words at a time
;; with WebAssembly SIMD: the range index's passes over its bit-sliced bucket codes (src/search/
;; primitives/range-index.ts; 17-45 ns a word in JavaScript, bound by their instructions), and the
;; bitset operations of bitset.ts: counts (a total, a facet value's count) and AND, OR, AND NOT
;; (2-12 ns a word in JavaScript), and the blocks of a sparse bitset that hold any row.
;;
;; Layout (select, atLeast): the slices of a block of four words (128 slots) lie together, bit j of the four words'
;; codes as one 16-byte vector at block * bits + j. Rows, edges and marks are plain word arrays
;; (16 bytes a block). Every offset is in bytes into the imported memory; blocks [from, to).
;; A block whose four row words are all zero is skipped and its outputs are not written.
;;
;; Regenerate word-kernel-wasm.ts after any change: npm run wasm.
(module
  (import "env" "memory" (memory 1))
  ;; select: blocks holding an edge row (low or high), listed at `list`; atLeast: their number too.
  (global $listed (export "listed") (mut i32) (i32.const 0))
  ;; atLeast: the rows equal to `code`.
  (global $equal (export "equal") (mut i32) (i32.const 0))


  (func $laneSum (param $v v128) (result i32)
    (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $v)) (i32x4.extract_lane 1 (local.get $v)))
      (i32.add (i32x4.extract_lane 2 (local.get $v)) (i32x4.extract_lane 3 (local.get $v)))))


  ;; rows := the rows whose code is within [lowCode, highCode], less those equal to an edge code
  ;; tested (testLow, testHigh: all ones or zero), which go to lows and highs. With marks (not 0),
  ;; the edge rows among `marks` are kept instead and nothing is listed.
  (func (export "select")
    (param $bits i32) (param $from i32) (param $to i32) (param $lowCode i32) (param $highCode i32)
    (param $testLow i32) (param $testHigh i32)
    (param $slices i32) (param $rows i32) (param $lows i32) (param $highs i32) (param $marks i32) (param $list i32)
    (local $b i32) (local $j i32) (local $p i32) (local $o i32) (local $n i32)
    (local $mask v128) (local $s v128) (local $underLow v128) (local $atLow v128) (local $underHigh v128)
    (local $atHigh v128) (local $low v128) (local $high v128) (local $kept v128) (local $compareHigh i32)
    ;; No high bound (the highest code, untested): a loop of its own compares the low code alone.
    (local.set $compareHigh (i32.or (i32.ne (local.get $highCode) (i32.sub (i32.shl (i32.const 1) (local.get $bits)) (i32.const 1))) (local.get $testHigh)))
    (local.set $b (local.get $from))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $b) (local.get $to)))
        (local.set $o (i32.shl (local.get $b) (i32.const 4)))
        (local.set $mask (v128.load (i32.add (local.get $rows) (local.get $o))))
        (if (v128.any_true (local.get $mask))
          (then
            ;; From the highest bit down: under* gathers the rows found below the code, at* those equal so far.
            (local.set $underLow (v128.const i64x2 0 0))
            (local.set $underHigh (v128.const i64x2 0 0))
            (local.set $atLow (local.get $mask))
            (local.set $atHigh (local.get $mask))
            (local.set $j (i32.sub (local.get $bits) (i32.const 1)))
            (local.set $p (i32.add (local.get $slices)
              (i32.shl (i32.add (i32.mul (local.get $b) (local.get $bits)) (local.get $j)) (i32.const 4))))
            (if (local.get $compareHigh)
              (then
                (loop $slice
                  (local.set $s (v128.load (local.get $p)))
                  ;; A code's bit 1: rows equal so far with a 0 are below it; 0: those with a 1 are above.
                  (if (i32.and (i32.shr_u (local.get $lowCode) (local.get $j)) (i32.const 1))
                    (then
                      (local.set $underLow (v128.or (local.get $underLow) (v128.andnot (local.get $atLow) (local.get $s))))
                      (local.set $atLow (v128.and (local.get $atLow) (local.get $s))))
                    (else (local.set $atLow (v128.andnot (local.get $atLow) (local.get $s)))))
                  (if (i32.and (i32.shr_u (local.get $highCode) (local.get $j)) (i32.const 1))
                    (then
                      (local.set $underHigh (v128.or (local.get $underHigh) (v128.andnot (local.get $atHigh) (local.get $s))))
                      (local.set $atHigh (v128.and (local.get $atHigh) (local.get $s))))
                    (else (local.set $atHigh (v128.andnot (local.get $atHigh) (local.get $s)))))
                  (local.set $p (i32.sub (local.get $p) (i32.const 16)))
                  (local.set $j (i32.sub (local.get $j) (i32.const 1)))
                  (br_if $slice (i32.ge_s (local.get $j) (i32.const 0)))))
              (else
                (local.set $underHigh (local.get $mask))
                (loop $lowSlice
                  (local.set $s (v128.load (local.get $p)))
                  (if (i32.and (i32.shr_u (local.get $lowCode) (local.get $j)) (i32.const 1))
                    (then
                      (local.set $underLow (v128.or (local.get $underLow) (v128.andnot (local.get $atLow) (local.get $s))))
                      (local.set $atLow (v128.and (local.get $atLow) (local.get $s))))
                    (else (local.set $atLow (v128.andnot (local.get $atLow) (local.get $s)))))
                  (local.set $p (i32.sub (local.get $p) (i32.const 16)))
                  (local.set $j (i32.sub (local.get $j) (i32.const 1)))
                  (br_if $lowSlice (i32.ge_s (local.get $j) (i32.const 0))))))
            (local.set $low (v128.and (local.get $atLow) (i32x4.splat (local.get $testLow))))
            (local.set $high (v128.and (local.get $atHigh) (i32x4.splat (local.get $testHigh))))
            ;; Codes lowCode..highCode, less the edges tested.
            (local.set $kept
              (v128.andnot
                (v128.andnot
                  (v128.and (v128.andnot (local.get $mask) (local.get $underLow)) (v128.or (local.get $underHigh) (local.get $atHigh)))
                  (local.get $low))
                (local.get $high)))
            (if (local.get $marks)
              (then
                (local.set $kept (v128.or (local.get $kept)
                  (v128.and (v128.load (i32.add (local.get $marks) (local.get $o))) (local.get $mask)))))
              (else
                (if (v128.any_true (v128.or (local.get $low) (local.get $high)))
                  (then
                    (v128.store (i32.add (local.get $lows) (local.get $o)) (local.get $low))
                    (v128.store (i32.add (local.get $highs) (local.get $o)) (local.get $high))
                    (i32.store (i32.add (local.get $list) (i32.shl (local.get $n) (i32.const 2))) (local.get $b))
                    (local.set $n (i32.add (local.get $n) (i32.const 1)))))))
            (v128.store (i32.add (local.get $rows) (local.get $o)) (local.get $kept))))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (br $blocks)))
    (global.set $listed (local.get $n)))

  ;; The rows of `matches` whose code is above `code` (with includeEqual not 0: at least `code`).
  ;; Without includeEqual, the rows equal to `code` are counted in `equal`, written to `equals` and
  ;; their blocks listed at `list`. `matches` is left as it was.
  (func (export "atLeast")
    (param $bits i32) (param $from i32) (param $to i32) (param $code i32) (param $includeEqual i32)
    (param $slices i32) (param $matches i32) (param $equals i32) (param $list i32) (result i32)
    (local $b i32) (local $j i32) (local $p i32) (local $o i32) (local $n i32)
    (local $mask v128) (local $s v128) (local $below v128) (local $eq v128)
    (local $above v128) (local $total v128) (local $equalTotal v128)
    (local.set $b (local.get $from))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $b) (local.get $to)))
        (local.set $o (i32.shl (local.get $b) (i32.const 4)))
        (local.set $mask (v128.load (i32.add (local.get $matches) (local.get $o))))
        (if (v128.any_true (local.get $mask))
          (then
            (local.set $below (v128.const i64x2 0 0))
            (local.set $eq (local.get $mask))
            (local.set $j (i32.sub (local.get $bits) (i32.const 1)))
            (local.set $p (i32.add (local.get $slices)
              (i32.shl (i32.add (i32.mul (local.get $b) (local.get $bits)) (local.get $j)) (i32.const 4))))
            (loop $slice
              (local.set $s (v128.load (local.get $p)))
              (if (i32.and (i32.shr_u (local.get $code) (local.get $j)) (i32.const 1))
                (then
                  (local.set $below (v128.or (local.get $below) (v128.andnot (local.get $eq) (local.get $s))))
                  (local.set $eq (v128.and (local.get $eq) (local.get $s))))
                (else (local.set $eq (v128.andnot (local.get $eq) (local.get $s)))))
              (local.set $p (i32.sub (local.get $p) (i32.const 16)))
              (local.set $j (i32.sub (local.get $j) (i32.const 1)))
              (br_if $slice (i32.ge_s (local.get $j) (i32.const 0))))
            (local.set $above (v128.andnot (v128.andnot (local.get $mask) (local.get $below)) (local.get $eq)))
            (if (local.get $includeEqual)
              (then (local.set $above (v128.or (local.get $above) (local.get $eq))))
              (else
                (if (v128.any_true (local.get $eq))
                  (then
                    (local.set $equalTotal (i32x4.add (local.get $equalTotal) (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (i8x16.popcnt (local.get $eq))))))
                    (v128.store (i32.add (local.get $equals) (local.get $o)) (local.get $eq))
                    (i32.store (i32.add (local.get $list) (i32.shl (local.get $n) (i32.const 2))) (local.get $b))
                    (local.set $n (i32.add (local.get $n) (i32.const 1)))))))
            (local.set $total (i32x4.add (local.get $total) (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (i8x16.popcnt (local.get $above))))))))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (br $blocks)))
    (global.set $listed (local.get $n))
    (global.set $equal (call $laneSum (local.get $equalTotal)))
    (call $laneSum (local.get $total)))

;; The rows of `matches` whose code is at least `code` (atMost not 0: at most it), written to
  ;; `out` for each block holding any, those blocks listed at `list`; their number returned. A
  ;; page's heap reads the keys of only these: the matches that may still beat the last row it keeps.
  (func (export "within")
    (param $bits i32) (param $from i32) (param $to i32) (param $code i32) (param $atMost i32)
    (param $slices i32) (param $matches i32) (param $out i32) (param $list i32) (result i32)
    (local $b i32) (local $j i32) (local $p i32) (local $o i32) (local $n i32)
    (local $mask v128) (local $s v128) (local $below v128) (local $eq v128) (local $kept v128)
    (local.set $b (local.get $from))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $b) (local.get $to)))
        (local.set $o (i32.shl (local.get $b) (i32.const 4)))
        (local.set $mask (v128.load (i32.add (local.get $matches) (local.get $o))))
        (if (v128.any_true (local.get $mask))
          (then
            (local.set $below (v128.const i64x2 0 0))
            (local.set $eq (local.get $mask))
            (local.set $j (i32.sub (local.get $bits) (i32.const 1)))
            (local.set $p (i32.add (local.get $slices)
              (i32.shl (i32.add (i32.mul (local.get $b) (local.get $bits)) (local.get $j)) (i32.const 4))))
            (loop $slice
              (local.set $s (v128.load (local.get $p)))
              (if (i32.and (i32.shr_u (local.get $code) (local.get $j)) (i32.const 1))
                (then
                  (local.set $below (v128.or (local.get $below) (v128.andnot (local.get $eq) (local.get $s))))
                  (local.set $eq (v128.and (local.get $eq) (local.get $s))))
                (else (local.set $eq (v128.andnot (local.get $eq) (local.get $s)))))
              (local.set $p (i32.sub (local.get $p) (i32.const 16)))
              (local.set $j (i32.sub (local.get $j) (i32.const 1)))
              (br_if $slice (i32.ge_s (local.get $j) (i32.const 0))))
            ;; At least the code: the matches not below it; at most: those below or equal.
            (if (local.get $atMost)
              (then (local.set $kept (v128.or (local.get $below) (local.get $eq))))
              (else (local.set $kept (v128.andnot (local.get $mask) (local.get $below)))))
            (if (v128.any_true (local.get $kept))
              (then
                (v128.store (i32.add (local.get $out) (local.get $o)) (local.get $kept))
                (i32.store (i32.add (local.get $list) (i32.shl (local.get $n) (i32.const 2))) (local.get $b))
                (local.set $n (i32.add (local.get $n) (i32.const 1)))))))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (br $blocks)))
    (local.get $n))

  ;; atLeast for `k` codes at once (a histogram's edges), each block's matches and slices read once
  ;; where k passes read them k times: for code q (the i32 at codes + 4q), the rows of `matches`
  ;; above it and those equal to it are added, by lane, to the vectors at counts + 32q and
  ;; counts + 32q + 16. No row is listed.
  (func (export "atLeastEach")
    (param $bits i32) (param $from i32) (param $to i32) (param $codes i32) (param $k i32)
    (param $slices i32) (param $matches i32) (param $counts i32)
    (local $b i32) (local $j i32) (local $p i32) (local $q i32) (local $code i32) (local $at i32) (local $first i32)
    (local $mask v128) (local $s v128) (local $below v128) (local $eq v128)
    (local.set $b (local.get $from))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $b) (local.get $to)))
        (local.set $mask (v128.load (i32.add (local.get $matches) (i32.shl (local.get $b) (i32.const 4)))))
        (if (v128.any_true (local.get $mask))
          (then
            ;; The block's highest slice: codes are compared from their highest bit down.
            (local.set $first (i32.add (local.get $slices)
              (i32.shl (i32.add (i32.mul (local.get $b) (local.get $bits)) (i32.sub (local.get $bits) (i32.const 1))) (i32.const 4))))
            (local.set $q (i32.const 0))
            (loop $each
              (local.set $code (i32.load (i32.add (local.get $codes) (i32.shl (local.get $q) (i32.const 2)))))
              (local.set $below (v128.const i64x2 0 0))
              (local.set $eq (local.get $mask))
              (local.set $j (i32.sub (local.get $bits) (i32.const 1)))
              (local.set $p (local.get $first))
              (loop $slice
                (local.set $s (v128.load (local.get $p)))
                (if (i32.and (i32.shr_u (local.get $code) (local.get $j)) (i32.const 1))
                  (then
                    (local.set $below (v128.or (local.get $below) (v128.andnot (local.get $eq) (local.get $s))))
                    (local.set $eq (v128.and (local.get $eq) (local.get $s))))
                  (else (local.set $eq (v128.andnot (local.get $eq) (local.get $s)))))
                (local.set $p (i32.sub (local.get $p) (i32.const 16)))
                (local.set $j (i32.sub (local.get $j) (i32.const 1)))
                (br_if $slice (i32.ge_s (local.get $j) (i32.const 0))))
              (local.set $at (i32.add (local.get $counts) (i32.shl (local.get $q) (i32.const 5))))
              (v128.store (local.get $at) (i32x4.add (v128.load (local.get $at))
                (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (i8x16.popcnt
                  (v128.andnot (v128.andnot (local.get $mask) (local.get $below)) (local.get $eq)))))))
              (local.set $at (i32.add (local.get $at) (i32.const 16)))
              (v128.store (local.get $at) (i32x4.add (v128.load (local.get $at))
                (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (i8x16.popcnt (local.get $eq))))))
              (local.set $q (i32.add (local.get $q) (i32.const 1)))
              (br_if $each (i32.lt_u (local.get $q) (local.get $k))))))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (br $blocks))))

  ;; The bits set in both `a` and `b` over blocks [0, blocks): a facet value's count among the
  ;; matches, and (`a` with itself) a total. A lane's byte counts add up in 16 bits: at most 16 a
  ;; block, so blocks <= 4,095.
  (func (export "popcountAnd") (param $a i32) (param $b i32) (param $blocks i32) (result i32)
    (local $o i32) (local $end i32) (local $sum v128)
    (local.set $end (i32.shl (local.get $blocks) (i32.const 4)))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $o) (local.get $end)))
        (local.set $sum (i16x8.add (local.get $sum) (i16x8.extadd_pairwise_i8x16_u (i8x16.popcnt
          (v128.and (v128.load (i32.add (local.get $a) (local.get $o))) (v128.load (i32.add (local.get $b) (local.get $o))))))))
        (local.set $o (i32.add (local.get $o) (i32.const 16)))
        (br $blocks)))
    (call $laneSum (i32x4.extadd_pairwise_i16x8_u (local.get $sum))))

  ;; a := a AND b, a OR b, a AND NOT b over blocks [0, blocks): the bitset operations of bitset.ts.
  (func (export "and") (param $a i32) (param $b i32) (param $blocks i32)
    (local $o i32) (local $end i32)
    (local.set $end (i32.shl (local.get $blocks) (i32.const 4)))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $o) (local.get $end)))
        (v128.store (i32.add (local.get $a) (local.get $o))
          (v128.and (v128.load (i32.add (local.get $a) (local.get $o))) (v128.load (i32.add (local.get $b) (local.get $o)))))
        (local.set $o (i32.add (local.get $o) (i32.const 16)))
        (br $blocks))))

  (func (export "or") (param $a i32) (param $b i32) (param $blocks i32)
    (local $o i32) (local $end i32)
    (local.set $end (i32.shl (local.get $blocks) (i32.const 4)))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $o) (local.get $end)))
        (v128.store (i32.add (local.get $a) (local.get $o))
          (v128.or (v128.load (i32.add (local.get $a) (local.get $o))) (v128.load (i32.add (local.get $b) (local.get $o)))))
        (local.set $o (i32.add (local.get $o) (i32.const 16)))
        (br $blocks))))

  (func (export "andNot") (param $a i32) (param $b i32) (param $blocks i32)
    (local $o i32) (local $end i32)
    (local.set $end (i32.shl (local.get $blocks) (i32.const 4)))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $o) (local.get $end)))
        (v128.store (i32.add (local.get $a) (local.get $o))
          (v128.andnot (v128.load (i32.add (local.get $a) (local.get $o))) (v128.load (i32.add (local.get $b) (local.get $o)))))
        (local.set $o (i32.add (local.get $o) (i32.const 16)))
        (br $blocks))))

  ;; The blocks of [0, blocks) at `a` with a bit set, listed at `list` (their number returned): a
  ;; sparse bitset's slots are then read from those blocks alone. Every block's number is written,
  ;; and the count moves only past a set one: no branch to mispredict where half the blocks are set.
  (func (export "setBlocks") (param $a i32) (param $blocks i32) (param $list i32) (result i32)
    (local $b i32) (local $n i32)
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $b) (local.get $blocks)))
        (i32.store (i32.add (local.get $list) (i32.shl (local.get $n) (i32.const 2))) (local.get $b))
        (local.set $n (i32.add (local.get $n)
          (v128.any_true (v128.load (i32.add (local.get $a) (i32.shl (local.get $b) (i32.const 4)))))))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (br $blocks)))
    (local.get $n))
)
