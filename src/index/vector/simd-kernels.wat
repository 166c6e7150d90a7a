;; Nearest-centroid kernel for the IVF-PQ write path and k-means (issue 7), WebAssembly SIMD.
;;
;; Source of src/index/vector/simd-kernels.wasm.ts: edit this file, then run
;; `node --import=tsx scripts/gen-simd-wasm.ts` (assembles it with the `wabt` dev dependency and
;; rewrites the generated module; test/index/vector/encode-kernel.test.ts checks they agree).
;; src/index/vector/simd-kernels.ts lays matrices and scratch out in the module's one memory;
;; pointers are byte addresses, vectors f32.
;;
;; Matrix layout: K vectors of `dim` values, transposed and padded to `kp` columns (K rounded up
;; to 16): element (d, j) at ct + (d·kp + j)·4, so four consecutive centroids of one dimension
;; are one v128; padding columns are zero. Then kp values h_j = fround(‖c_j‖²)/2 (+Inf in the
;; padding) at hp = ct + dim·kp·4.
;;
;; `nearest` handles rows in groups of 16 (dimensions in slices of 128): `dist` (the blocked,
;; GEMM-style part) writes
;;   F[r][j] = h_j − x_r·c_j   (= D_j/2 with D_j = ‖c_j‖² − 2x·c_j = ‖x − c_j‖² − ‖x‖²)
;; with 2-row × 16-column register tiles (8 f32x4 accumulators, each lane a sequential f32 sum
;; over d starting from h_j), the 16-column slice of the matrix (16·dim·4 bytes) reused by all
;; rows of the group; then `argmin` picks, per row, the smallest F (lowest index on ties) and
;; certifies it. WebAssembly never fuses mul+add, so the values are the same on every engine.
;;
;; Certificate. With X ≥ ‖x‖, C ≥ max ‖c_j‖ (passed in), n = dim, u = 2⁻²⁴: 2F̂_j is the f32
;; computation of D_j from fround(‖c_j‖²) and −2x (scaling by 2 is exact), a sum of n+1 terms, so
;; |2F̂_j − D_j| ≤ γ_{n+1}(C² + 2XC) + 1.01·u·C² ≤ u·(1.01(n+3)C² + 2.02(n+1)XC) =: E32. The caller's
;; float64 reference distance is within E64 = (n+4)·2⁻⁵³·(X+C)² of D_j + ‖x‖² (‖x‖² is the same
;; for every j). So if every other column has 2F̂ more than
;;   T = u·1.02·(4n+8)·(XC + C²) + (2n+8)·2⁻⁵²·(X+C)² + (4n+8)·2⁻¹⁴⁰   (≥ 2(E32 + E64), plus
;;   subnormal rounding; valid for n ≤ 65536)
;; above the minimum, the minimum is the reference's strict argmin: its index is written.
;; Otherwise −1, and the caller re-checks every column within T with the exact reference. Rows
;; with X > 1e15 (the caller keeps C ≤ 1e15, so nothing overflows below that) or a non-finite
;; minimum also get −1.
(module
  (memory (export "memory") 1)

  ;; The certified nearest column (or −1) of each of `rows` rows: x row r at xp + r·xs (bytes,
  ;; `dim` values), matrix at ct (kp columns, h at ct + dim·kp·4), cmax ≥ max ‖c_j‖; F (rows × kp)
  ;; at dp, results (i32) at outp, each row's second smallest F (f32) at sp. Rows go in groups of
  ;; 16 and dimensions in slices of 128 (a partial F is stored and reloaded exactly, so each sum
  ;; stays sequential over d), so a tile's matrix slice (16 columns × 128 × 4 bytes) and the
  ;; group's x slice stay in L1, and the group's F block is still in cache for `argmin`.
  (func (export "nearest")
    (param $xp i32) (param $xs i32) (param $rows i32) (param $dim i32)
    (param $ct i32) (param $kp i32) (param $cmax f64) (param $dp i32) (param $outp i32) (param $sp i32)
    (local $r i32) (local $g i32) (local $hp i32) (local $xr i32) (local $dr i32)
    (local $d0 i32) (local $dn i32)
    (local.set $hp (i32.add (local.get $ct) (i32.shl (i32.mul (local.get $dim) (local.get $kp)) (i32.const 2))))
    (block $done
      (loop $groups
        (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $g (i32.sub (local.get $rows) (local.get $r)))
        (if (i32.gt_u (local.get $g) (i32.const 16)) (then (local.set $g (i32.const 16))))
        (local.set $xr (i32.add (local.get $xp) (i32.mul (local.get $r) (local.get $xs))))
        (local.set $dr (i32.add (local.get $dp) (i32.shl (i32.mul (local.get $r) (local.get $kp)) (i32.const 2))))
        (local.set $d0 (i32.const 0))
        (loop $slices
          (local.set $dn (i32.sub (local.get $dim) (local.get $d0)))
          (if (i32.gt_u (local.get $dn) (i32.const 128)) (then (local.set $dn (i32.const 128))))
          (call $dist
            (i32.add (local.get $xr) (i32.shl (local.get $d0) (i32.const 2))) (local.get $xs) (local.get $g) (local.get $dn)
            (i32.add (local.get $ct) (i32.shl (i32.mul (local.get $d0) (local.get $kp)) (i32.const 2))) (local.get $kp)
            (local.get $hp) (local.get $dr) (i32.eqz (local.get $d0)))
          (br_if $slices (i32.lt_u (local.tee $d0 (i32.add (local.get $d0) (local.get $dn))) (local.get $dim))))
        (call $argmin (local.get $dr) (local.get $kp) (local.get $g) (local.get $xr) (local.get $xs)
                      (local.get $dim) (local.get $cmax) (i32.add (local.get $outp) (i32.shl (local.get $r) (i32.const 2)))
                      (i32.add (local.get $sp) (i32.shl (local.get $r) (i32.const 2))))
        (local.set $r (i32.add (local.get $r) (local.get $g)))
        (br $groups))))

  ;; k-means++ seeding, one new centre (index cidx, dim values at cp) against every point i < n
  ;; (x_i at xp + i·dim·4): if cc[assign[i]] < 4·dist[i] (f64 at ccp, i32 at ap, f64 at dp) and
  ;; ‖x_i − c‖² < dist[i], then dist[i] = ‖x_i − c‖² and assign[i] = cidx. Returns Σ dist[i],
  ;; summed in order. Exactly the JS loop of kmeans.ts's seedPlusPlus: the distance is computed (inline)
  ;; as l2Bounded does — float64, accumulators s0..s3 over d mod 4 (the lanes of s01 and s23), the
  ;; partial ((s0 + s1) + s2) + s3 returned once it reaches dist[i] (checked every 32 dimensions),
  ;; the last dim mod 4 squared differences added to s0, then ((s0 + s1) + s2) + s3 — so every
  ;; decision and value is the same.
  (func (export "seed_update")
    (param $xp i32) (param $n i32) (param $dim i32) (param $cp i32)
    (param $ccp i32) (param $ap i32) (param $dp i32) (param $cidx i32) (result f64)
    (local $i i32) (local $x i32) (local $di f64) (local $d f64) (local $total f64) (local $rowb i32)
    (local $j i32) (local $e i32) (local $dim4 i32) (local $va v128) (local $vb v128)
    (local $s01 v128) (local $s23 v128) (local $t v128) (local $p f64) (local $s0 f64) (local $f f64)
    (local.set $dim4 (i32.and (local.get $dim) (i32.const -4)))
    (local.set $rowb (i32.shl (local.get $dim) (i32.const 2)))
    (local.set $x (local.get $xp))
    (block $done
      (loop $points
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $di (f64.load (i32.add (local.get $dp) (i32.shl (local.get $i) (i32.const 3)))))
        (if (f64.lt
              (f64.load (i32.add (local.get $ccp)
                (i32.shl (i32.load (i32.add (local.get $ap) (i32.shl (local.get $i) (i32.const 2)))) (i32.const 3))))
              (f64.mul (f64.const 4) (local.get $di)))
          (then
            (block $dist_done
            (local.set $j (i32.const 0))
            (local.set $s01 (v128.const i32x4 0 0 0 0))
            (local.set $s23 (v128.const i32x4 0 0 0 0))
            (block $full
              (loop $chunks
                (local.set $e (select (i32.add (local.get $j) (i32.const 32)) (local.get $dim4)
                                      (i32.lt_u (i32.add (local.get $j) (i32.const 32)) (local.get $dim4))))
                (block $chunk_done
                  (loop $quads
                    (br_if $chunk_done (i32.ge_u (local.get $j) (local.get $e)))
                    (local.set $va (v128.load (i32.add (local.get $x) (i32.shl (local.get $j) (i32.const 2)))))
                    (local.set $vb (v128.load (i32.add (local.get $cp) (i32.shl (local.get $j) (i32.const 2)))))
                    (local.set $t (f64x2.sub (f64x2.promote_low_f32x4 (local.get $va)) (f64x2.promote_low_f32x4 (local.get $vb))))
                    (local.set $s01 (f64x2.add (local.get $s01) (f64x2.mul (local.get $t) (local.get $t))))
                    (local.set $t (f64x2.sub
                      (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $va) (local.get $va)))
                      (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $vb) (local.get $vb)))))
                    (local.set $s23 (f64x2.add (local.get $s23) (f64x2.mul (local.get $t) (local.get $t))))
                    (local.set $j (i32.add (local.get $j) (i32.const 4)))
                    (br $quads)))
                (br_if $full (i32.ge_u (local.get $j) (local.get $dim4)))
                (local.set $p (f64.add (f64.add (f64.add (f64x2.extract_lane 0 (local.get $s01)) (f64x2.extract_lane 1 (local.get $s01)))
                                                (f64x2.extract_lane 0 (local.get $s23)))
                                       (f64x2.extract_lane 1 (local.get $s23))))
                (if (f64.ge (local.get $p) (local.get $di)) (then (local.set $d (local.get $p)) (br $dist_done)))
                (br $chunks)))
            (local.set $s0 (f64x2.extract_lane 0 (local.get $s01)))
            (block $tail_done
              (loop $tail
                (br_if $tail_done (i32.ge_u (local.get $j) (local.get $dim)))
                (local.set $f (f64.sub (f64.promote_f32 (f32.load (i32.add (local.get $x) (i32.shl (local.get $j) (i32.const 2)))))
                                       (f64.promote_f32 (f32.load (i32.add (local.get $cp) (i32.shl (local.get $j) (i32.const 2)))))))
                (local.set $s0 (f64.add (local.get $s0) (f64.mul (local.get $f) (local.get $f))))
                (local.set $j (i32.add (local.get $j) (i32.const 1)))
                (br $tail)))
            (local.set $d (f64.add (f64.add (f64.add (local.get $s0) (f64x2.extract_lane 1 (local.get $s01))) (f64x2.extract_lane 0 (local.get $s23)))
                                   (f64x2.extract_lane 1 (local.get $s23)))))
            (if (f64.lt (local.get $d) (local.get $di))
              (then
                (f64.store (i32.add (local.get $dp) (i32.shl (local.get $i) (i32.const 3))) (local.get $d))
                (i32.store (i32.add (local.get $ap) (i32.shl (local.get $i) (i32.const 2))) (local.get $cidx))))))
        (local.set $total (f64.add (local.get $total)
          (f64.load (i32.add (local.get $dp) (i32.shl (local.get $i) (i32.const 3))))))
        (local.set $x (i32.add (local.get $x) (local.get $rowb)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $points)))
    (local.get $total))

  ;; F[r][j] for r < rows, j < kp over dimensions d < dn: row r of x at xp + r·xs (bytes),
  ;; column j of dimension d at ct + (d·kp + j)·4, F row r at op + r·kp·4. `first` = 1 starts the
  ;; sums from h (at hp), 0 continues the partial sums already in F (a later slice of dimensions).
  ;; Tiles of 2 rows × 16 columns (8 f32x4 accumulators); leftover rows one at a time.
  (func $dist
    (param $xp i32) (param $xs i32) (param $rows i32) (param $dn i32)
    (param $ct i32) (param $kp i32) (param $hp i32) (param $op i32) (param $first i32)
    (local $rowb i32) (local $jb i32) (local $r i32) (local $d i32) (local $p i32) (local $o i32)
    (local $x0 i32) (local $x1 i32)
    (local $a0 v128) (local $a1 v128)
    (local $c0 v128) (local $c1 v128) (local $c2 v128) (local $c3 v128)
    (local $s0_0 v128) (local $s0_1 v128) (local $s0_2 v128) (local $s0_3 v128)
    (local $s1_0 v128) (local $s1_1 v128) (local $s1_2 v128) (local $s1_3 v128)
    (local.set $rowb (i32.shl (local.get $kp) (i32.const 2)))
    (local.set $jb (i32.const 0))
    (block $done
      (loop $cols
        (br_if $done (i32.ge_u (local.get $jb) (local.get $rowb)))
        (local.set $r (i32.const 0))
        (block $tiles_done
          (loop $tiles
            (br_if $tiles_done (i32.gt_u (i32.add (local.get $r) (i32.const 2)) (local.get $rows)))
            (local.set $o (i32.add (i32.add (local.get $op) (i32.mul (local.get $r) (local.get $rowb))) (local.get $jb)))
            (if (local.get $first)
              (then
                (local.set $p (i32.add (local.get $hp) (local.get $jb)))
                (local.set $s0_0 (v128.load offset=0 (local.get $p)))
                (local.set $s0_1 (v128.load offset=16 (local.get $p)))
                (local.set $s0_2 (v128.load offset=32 (local.get $p)))
                (local.set $s0_3 (v128.load offset=48 (local.get $p)))
                (local.set $s1_0 (local.get $s0_0))
                (local.set $s1_1 (local.get $s0_1))
                (local.set $s1_2 (local.get $s0_2))
                (local.set $s1_3 (local.get $s0_3)))
              (else
                (local.set $p (local.get $o))
                (local.set $s0_0 (v128.load offset=0 (local.get $p)))
                (local.set $s0_1 (v128.load offset=16 (local.get $p)))
                (local.set $s0_2 (v128.load offset=32 (local.get $p)))
                (local.set $s0_3 (v128.load offset=48 (local.get $p)))
                (local.set $p (i32.add (local.get $p) (local.get $rowb)))
                (local.set $s1_0 (v128.load offset=0 (local.get $p)))
                (local.set $s1_1 (v128.load offset=16 (local.get $p)))
                (local.set $s1_2 (v128.load offset=32 (local.get $p)))
                (local.set $s1_3 (v128.load offset=48 (local.get $p)))))
            (local.set $p (i32.add (local.get $ct) (local.get $jb)))
            (local.set $x0 (i32.add (local.get $xp) (i32.mul (local.get $r) (local.get $xs))))
            (local.set $x1 (i32.add (local.get $x0) (local.get $xs)))
            (local.set $d (local.get $dn))
            (loop $dims
              (local.set $c0 (v128.load offset=0 (local.get $p)))
              (local.set $c1 (v128.load offset=16 (local.get $p)))
              (local.set $c2 (v128.load offset=32 (local.get $p)))
              (local.set $c3 (v128.load offset=48 (local.get $p)))
              (local.set $a0 (v128.load32_splat (local.get $x0)))
              (local.set $a1 (v128.load32_splat (local.get $x1)))
              (local.set $s0_0 (f32x4.sub (local.get $s0_0) (f32x4.mul (local.get $a0) (local.get $c0))))
              (local.set $s0_1 (f32x4.sub (local.get $s0_1) (f32x4.mul (local.get $a0) (local.get $c1))))
              (local.set $s0_2 (f32x4.sub (local.get $s0_2) (f32x4.mul (local.get $a0) (local.get $c2))))
              (local.set $s0_3 (f32x4.sub (local.get $s0_3) (f32x4.mul (local.get $a0) (local.get $c3))))
              (local.set $s1_0 (f32x4.sub (local.get $s1_0) (f32x4.mul (local.get $a1) (local.get $c0))))
              (local.set $s1_1 (f32x4.sub (local.get $s1_1) (f32x4.mul (local.get $a1) (local.get $c1))))
              (local.set $s1_2 (f32x4.sub (local.get $s1_2) (f32x4.mul (local.get $a1) (local.get $c2))))
              (local.set $s1_3 (f32x4.sub (local.get $s1_3) (f32x4.mul (local.get $a1) (local.get $c3))))
              (local.set $p (i32.add (local.get $p) (local.get $rowb)))
              (local.set $x0 (i32.add (local.get $x0) (i32.const 4)))
              (local.set $x1 (i32.add (local.get $x1) (i32.const 4)))
              (br_if $dims (local.tee $d (i32.sub (local.get $d) (i32.const 1)))))
            (local.set $p (local.get $o))
            (v128.store offset=0 (local.get $p) (local.get $s0_0))
            (v128.store offset=16 (local.get $p) (local.get $s0_1))
            (v128.store offset=32 (local.get $p) (local.get $s0_2))
            (v128.store offset=48 (local.get $p) (local.get $s0_3))
            (local.set $p (i32.add (local.get $p) (local.get $rowb)))
            (v128.store offset=0 (local.get $p) (local.get $s1_0))
            (v128.store offset=16 (local.get $p) (local.get $s1_1))
            (v128.store offset=32 (local.get $p) (local.get $s1_2))
            (v128.store offset=48 (local.get $p) (local.get $s1_3))
            (local.set $r (i32.add (local.get $r) (i32.const 2)))
            (br $tiles)))
        ;; Leftover rows, one at a time.
        (block $rest_done
          (loop $rest
            (br_if $rest_done (i32.ge_u (local.get $r) (local.get $rows)))
            (local.set $o (i32.add (i32.add (local.get $op) (i32.mul (local.get $r) (local.get $rowb))) (local.get $jb)))
            (local.set $p (select (i32.add (local.get $hp) (local.get $jb)) (local.get $o) (local.get $first)))
            (local.set $s0_0 (v128.load offset=0 (local.get $p)))
            (local.set $s0_1 (v128.load offset=16 (local.get $p)))
            (local.set $s0_2 (v128.load offset=32 (local.get $p)))
            (local.set $s0_3 (v128.load offset=48 (local.get $p)))
            (local.set $p (i32.add (local.get $ct) (local.get $jb)))
            (local.set $x0 (i32.add (local.get $xp) (i32.mul (local.get $r) (local.get $xs))))
            (local.set $d (local.get $dn))
            (loop $dims1
              (local.set $a0 (v128.load32_splat (local.get $x0)))
              (local.set $s0_0 (f32x4.sub (local.get $s0_0) (f32x4.mul (local.get $a0) (v128.load offset=0 (local.get $p)))))
              (local.set $s0_1 (f32x4.sub (local.get $s0_1) (f32x4.mul (local.get $a0) (v128.load offset=16 (local.get $p)))))
              (local.set $s0_2 (f32x4.sub (local.get $s0_2) (f32x4.mul (local.get $a0) (v128.load offset=32 (local.get $p)))))
              (local.set $s0_3 (f32x4.sub (local.get $s0_3) (f32x4.mul (local.get $a0) (v128.load offset=48 (local.get $p)))))
              (local.set $p (i32.add (local.get $p) (local.get $rowb)))
              (local.set $x0 (i32.add (local.get $x0) (i32.const 4)))
              (br_if $dims1 (local.tee $d (i32.sub (local.get $d) (i32.const 1)))))
            (v128.store offset=0 (local.get $o) (local.get $s0_0))
            (v128.store offset=16 (local.get $o) (local.get $s0_1))
            (v128.store offset=32 (local.get $o) (local.get $s0_2))
            (v128.store offset=48 (local.get $o) (local.get $s0_3))
            (local.set $r (i32.add (local.get $r) (i32.const 1)))
            (br $rest)))
        (local.set $jb (i32.add (local.get $jb) (i32.const 64)))
        (br $cols))))

  ;; Per row r < rows: out[r] (i32 at outp + 4r) = certified argmin of F row r (at dp + r·kp·4),
  ;; or −1, and the row's second smallest F (f32 at sp + 4r). x row r at xp + r·xs, dim values (for X = ‖x‖); cmax ≥ max ‖c_j‖. Per lane (columns
  ;; j ≡ lane mod 4): the smallest value, its first index and the second smallest value; two rows
  ;; at a time, so the two dependency chains overlap.
  (func $argmin
    (param $dp i32) (param $kp i32) (param $rows i32)
    (param $xp i32) (param $xs i32) (param $dim i32) (param $cmax f64) (param $outp i32) (param $sp i32)
    (local $r i32) (local $q i32) (local $end i32) (local $rowb i32) (local $res i32) (local $sec f32)
    (local $va v128) (local $m1a v128) (local $m2a v128) (local $idxa v128)
    (local $vb v128) (local $m1b v128) (local $m2b v128) (local $idxb v128) (local $jv v128)
    (local.set $rowb (i32.shl (local.get $kp) (i32.const 2)))
    (block $pairs_done
      (loop $pairs
        (br_if $pairs_done (i32.gt_u (i32.add (local.get $r) (i32.const 2)) (local.get $rows)))
        (local.set $m1a (v128.const f32x4 inf inf inf inf))
        (local.set $m2a (v128.const f32x4 inf inf inf inf))
        (local.set $idxa (v128.const i32x4 0 0 0 0))
        (local.set $m1b (v128.const f32x4 inf inf inf inf))
        (local.set $m2b (v128.const f32x4 inf inf inf inf))
        (local.set $idxb (v128.const i32x4 0 0 0 0))
        (local.set $jv (v128.const i32x4 0 1 2 3))
        (local.set $q (i32.add (local.get $dp) (i32.mul (local.get $r) (local.get $rowb))))
        (local.set $end (i32.add (local.get $q) (local.get $rowb)))
        (loop $scan
          (local.set $va (v128.load (local.get $q)))
          (local.set $vb (v128.load (i32.add (local.get $q) (local.get $rowb))))
          (local.set $m2a (f32x4.pmin (local.get $m2a) (f32x4.pmax (local.get $m1a) (local.get $va))))
          (local.set $idxa (v128.bitselect (local.get $jv) (local.get $idxa) (f32x4.lt (local.get $va) (local.get $m1a))))
          (local.set $m1a (f32x4.pmin (local.get $m1a) (local.get $va)))
          (local.set $m2b (f32x4.pmin (local.get $m2b) (f32x4.pmax (local.get $m1b) (local.get $vb))))
          (local.set $idxb (v128.bitselect (local.get $jv) (local.get $idxb) (f32x4.lt (local.get $vb) (local.get $m1b))))
          (local.set $m1b (f32x4.pmin (local.get $m1b) (local.get $vb)))
          (local.set $jv (i32x4.add (local.get $jv) (v128.const i32x4 4 4 4 4)))
          (br_if $scan (i32.lt_u (local.tee $q (i32.add (local.get $q) (i32.const 16))) (local.get $end))))
        (call $certify (local.get $m1a) (local.get $m2a) (local.get $idxa)
          (i32.add (local.get $xp) (i32.mul (local.get $r) (local.get $xs))) (local.get $dim) (local.get $cmax))
        local.set $sec
        local.set $res
        (i32.store (i32.add (local.get $outp) (i32.shl (local.get $r) (i32.const 2))) (local.get $res))
        (f32.store (i32.add (local.get $sp) (i32.shl (local.get $r) (i32.const 2))) (local.get $sec))
        (call $certify (local.get $m1b) (local.get $m2b) (local.get $idxb)
          (i32.add (local.get $xp) (i32.mul (i32.add (local.get $r) (i32.const 1)) (local.get $xs))) (local.get $dim) (local.get $cmax))
        local.set $sec
        local.set $res
        (i32.store offset=4 (i32.add (local.get $outp) (i32.shl (local.get $r) (i32.const 2))) (local.get $res))
        (f32.store offset=4 (i32.add (local.get $sp) (i32.shl (local.get $r) (i32.const 2))) (local.get $sec))
        (local.set $r (i32.add (local.get $r) (i32.const 2)))
        (br $pairs)))
    (if (i32.lt_u (local.get $r) (local.get $rows))
      (then
        (local.set $m1a (v128.const f32x4 inf inf inf inf))
        (local.set $m2a (v128.const f32x4 inf inf inf inf))
        (local.set $idxa (v128.const i32x4 0 0 0 0))
        (local.set $jv (v128.const i32x4 0 1 2 3))
        (local.set $q (i32.add (local.get $dp) (i32.mul (local.get $r) (local.get $rowb))))
        (local.set $end (i32.add (local.get $q) (local.get $rowb)))
        (loop $scan1
          (local.set $va (v128.load (local.get $q)))
          (local.set $m2a (f32x4.pmin (local.get $m2a) (f32x4.pmax (local.get $m1a) (local.get $va))))
          (local.set $idxa (v128.bitselect (local.get $jv) (local.get $idxa) (f32x4.lt (local.get $va) (local.get $m1a))))
          (local.set $m1a (f32x4.pmin (local.get $m1a) (local.get $va)))
          (local.set $jv (i32x4.add (local.get $jv) (v128.const i32x4 4 4 4 4)))
          (br_if $scan1 (i32.lt_u (local.tee $q (i32.add (local.get $q) (i32.const 16))) (local.get $end))))
        (call $certify (local.get $m1a) (local.get $m2a) (local.get $idxa)
          (i32.add (local.get $xp) (i32.mul (local.get $r) (local.get $xs))) (local.get $dim) (local.get $cmax))
        local.set $sec
        local.set $res
        (i32.store (i32.add (local.get $outp) (i32.shl (local.get $r) (i32.const 2))) (local.get $res))
        (f32.store (i32.add (local.get $sp) (i32.shl (local.get $r) (i32.const 2))) (local.get $sec)))))

  ;; The certified argmin from a row's lane states (m1: smallest F per lane, idx: its first
  ;; column, m2: the lane's second smallest), or −1, and the second smallest F of the row (the
  ;; smallest over the other columns); x at xr (dim values).
  (func $certify
    (param $m1 v128) (param $m2 v128) (param $idx v128) (param $xr i32) (param $dim i32) (param $cmax f64)
    (result i32 f32)
    (local $t v128) (local $win v128) (local $best f32) (local $second f32) (local $bi i32)
    (local $d i32) (local $s f64) (local $f f64) (local $x f64) (local $n f64) (local $tol f64)
    ;; best = min over lanes of m1; bi = the lowest column among lanes holding it.
    (local.set $t (f32x4.pmin (local.get $m1) (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $m1) (local.get $m1))))
    (local.set $t (f32x4.pmin (local.get $t) (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $t) (local.get $t))))
    (local.set $best (f32x4.extract_lane 0 (local.get $t)))
    (local.set $t (v128.bitselect (local.get $idx) (v128.const i32x4 0x7fffffff 0x7fffffff 0x7fffffff 0x7fffffff)
                                  (f32x4.eq (local.get $m1) (f32x4.splat (local.get $best)))))
    (local.set $t (i32x4.min_s (local.get $t) (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $t) (local.get $t))))
    (local.set $t (i32x4.min_s (local.get $t) (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $t) (local.get $t))))
    (local.set $bi (i32x4.extract_lane 0 (local.get $t)))
    ;; second = min(every lane's m2, every other lane's m1) (lanes hold distinct columns).
    (local.set $win (i32x4.eq (local.get $idx) (i32x4.splat (local.get $bi))))
    (local.set $t (f32x4.pmin (local.get $m2) (v128.bitselect (v128.const f32x4 inf inf inf inf) (local.get $m1) (local.get $win))))
    (local.set $t (f32x4.pmin (local.get $t) (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $t) (local.get $t))))
    (local.set $t (f32x4.pmin (local.get $t) (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $t) (local.get $t))))
    (local.set $second (f32x4.extract_lane 0 (local.get $t)))
    ;; X = ‖x‖ (float64 sum of squares, rounded up).
    (local.set $d (local.get $dim))
    (loop $norm
      (local.set $f (f64.promote_f32 (f32.load (local.get $xr))))
      (local.set $s (f64.add (local.get $s) (f64.mul (local.get $f) (local.get $f))))
      (local.set $xr (i32.add (local.get $xr) (i32.const 4)))
      (br_if $norm (local.tee $d (i32.sub (local.get $d) (i32.const 1)))))
    (local.set $x (f64.mul (f64.sqrt (local.get $s)) (f64.const 0x1.00000004p+0)))
    ;; T = u·1.02·(4n+8)·(XC + C²) + (2n+8)·2⁻⁵²·(X+C)² + (4n+8)·2⁻¹⁴⁰.
    (local.set $n (f64.convert_i32_u (local.get $dim)))
    (local.set $tol
      (f64.add
        (f64.add
          (f64.mul (f64.mul (f64.const 0x1p-24) (f64.mul (f64.const 1.02) (f64.add (f64.mul (f64.const 4) (local.get $n)) (f64.const 8))))
                   (f64.mul (local.get $cmax) (f64.add (local.get $x) (local.get $cmax))))
          (f64.mul (f64.mul (f64.add (f64.mul (f64.const 2) (local.get $n)) (f64.const 8)) (f64.const 0x1p-52))
                   (f64.mul (f64.add (local.get $x) (local.get $cmax)) (f64.add (local.get $x) (local.get $cmax)))))
        (f64.mul (f64.add (f64.mul (f64.const 4) (local.get $n)) (f64.const 8)) (f64.const 0x1p-140))))
    (select (local.get $bi) (i32.const -1)
      (i32.and
        (i32.and (f64.le (local.get $x) (f64.const 1e15))
                 (f64.lt (f64.abs (f64.promote_f32 (local.get $best))) (f64.const inf)))
        (f64.gt (f64.mul (f64.const 2) (f64.sub (f64.promote_f32 (local.get $second)) (f64.promote_f32 (local.get $best))))
                (local.get $tol))))
    (local.get $second))
)

