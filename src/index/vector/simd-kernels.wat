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

  ;; The lanes' verdict (m1: smallest F per lane, idx: its first column, m2: the lane's second
  ;; smallest): the row's smallest F, the lowest column holding it, and the second smallest F of
  ;; the row (the smallest over the other columns; lanes hold distinct columns).
  (func $lanes
    (param $m1 v128) (param $m2 v128) (param $idx v128) (result f32 i32 f32)
    (local $t v128) (local $win v128) (local $best f32) (local $bi i32)
    ;; best = min over lanes of m1; bi = the lowest column among lanes holding it.
    (local.set $t (f32x4.pmin (local.get $m1) (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $m1) (local.get $m1))))
    (local.set $t (f32x4.pmin (local.get $t) (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $t) (local.get $t))))
    (local.set $best (f32x4.extract_lane 0 (local.get $t)))
    (local.set $t (v128.bitselect (local.get $idx) (v128.const i32x4 0x7fffffff 0x7fffffff 0x7fffffff 0x7fffffff)
                                  (f32x4.eq (local.get $m1) (f32x4.splat (local.get $best)))))
    (local.set $t (i32x4.min_s (local.get $t) (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $t) (local.get $t))))
    (local.set $t (i32x4.min_s (local.get $t) (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $t) (local.get $t))))
    (local.set $bi (i32x4.extract_lane 0 (local.get $t)))
    ;; second = min(every lane's m2, every other lane's m1).
    (local.set $win (i32x4.eq (local.get $idx) (i32x4.splat (local.get $bi))))
    (local.set $t (f32x4.pmin (local.get $m2) (v128.bitselect (v128.const f32x4 inf inf inf inf) (local.get $m1) (local.get $win))))
    (local.set $t (f32x4.pmin (local.get $t) (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $t) (local.get $t))))
    (local.set $t (f32x4.pmin (local.get $t) (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $t) (local.get $t))))
    (local.get $best) (local.get $bi) (f32x4.extract_lane 0 (local.get $t)))

  ;; The certified argmin from a row's lane states (see $lanes), or −1, and the second smallest F
  ;; of the row; x at xr (dim values).
  (func $certify
    (param $m1 v128) (param $m2 v128) (param $idx v128) (param $xr i32) (param $dim i32) (param $cmax f64)
    (result i32 f32)
    (local $best f32) (local $second f32) (local $bi i32)
    (local $d i32) (local $s f64) (local $f f64) (local $x f64) (local $n f64) (local $tol f64)
    (call $lanes (local.get $m1) (local.get $m2) (local.get $idx))
    local.set $second
    local.set $bi
    local.set $best
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

  ;; ---- 16-bit integer kernel (the IVF-PQ write path) ----
  ;;
  ;; The same certified nearest column, from exact integer dot products of quantised values:
  ;; x̃ = round(x/s_x) and c̃ = round(c/s_c) as i16 (s_x, s_c powers of two, |x̃|·|c̃|·n < 2³¹),
  ;; so x̃·c̃ is exact in i32 and i32x4.dot_i16x8_s does 8 multiply-adds an instruction (the f32
  ;; kernel: 4 in two). Then F̂_j = h_j − s·f32(x̃·c̃_j) with s = s_x·s_c (exact, a power of two).
  ;; The caller passes, per row, s and the margin T (certifyTolerance16 in simd-kernels.ts), so a
  ;; column is certified as the reference's strict nearest when every other column's 2F̂ is more
  ;; than T above it; else −1 and the caller re-checks the columns within T. F̂ overwrites the
  ;; integer block, for that re-check.
  ;;
  ;; The margin. With x_d = s_x·x̃_d + e_d, c_d = s_c·c̃_d + f_d, |e_d| ≤ s_x/2, |f_d| ≤ s_c/2:
  ;; x·c − s·x̃·c̃ = Σ (x_d f_d + e_d c_d − e_d f_d), so |x·c − s·x̃·c̃| ≤ E_q = (s_c·‖x‖₁ + s_x·‖c‖₁)/2
  ;; + n·s_x·s_c/4. The f32 conversion of the exact integer, the exact product by s, the f32
  ;; subtraction and h_j's own rounding add at most 2u·(XC + E_q) + u·C² + n·2⁻⁵³·C², so
  ;; |F̂_j − (‖c_j‖²/2 − x·c_j)| ≤ E_F; two columns compared on 2F̂ differ from D by at most 4·E_F,
  ;; plus the float64 reference's error as in the f32 certificate. The caller's T is that with 2 %
  ;; to spare (test/index/vector/int16-kernel.test.ts checks |F̂ − F| ≤ T/4 on measured values).
  ;;
  ;; Matrix layout: pairs of dimensions (2p, 2p+1), element (p, j, t) at ct + (p·kp + j)·4 + 2t,
  ;; so one v128 holds four consecutive columns of one pair; an odd dim is padded with a zero
  ;; dimension (the row value it meets is multiplied by 0). h_j at hp (f32, +Inf in the padding).
  ;; Rows: i16 values, row r at xp + r·xs, the pair p at xp + r·xs + 4p.
  (func (export "nearest16")
    (param $xp i32) (param $xs i32) (param $rows i32) (param $pairs i32)
    (param $ct i32) (param $kp i32) (param $hp i32) (param $scp i32) (param $tp i32)
    (param $dp i32) (param $outp i32) (param $sp i32)
    (local $r i32) (local $g i32) (local $xr i32) (local $dr i32) (local $p0 i32) (local $pn i32)
    (block $done
      (loop $groups
        (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $g (i32.sub (local.get $rows) (local.get $r)))
        (if (i32.gt_u (local.get $g) (i32.const 16)) (then (local.set $g (i32.const 16))))
        (local.set $xr (i32.add (local.get $xp) (i32.mul (local.get $r) (local.get $xs))))
        (local.set $dr (i32.add (local.get $dp) (i32.shl (i32.mul (local.get $r) (local.get $kp)) (i32.const 2))))
        ;; Pairs in slices of 256 (a 16-column slice of the matrix is 16 KB); partial sums are
        ;; exact integers, so slicing changes nothing.
        (local.set $p0 (i32.const 0))
        (loop $slices
          (local.set $pn (i32.sub (local.get $pairs) (local.get $p0)))
          (if (i32.gt_u (local.get $pn) (i32.const 256)) (then (local.set $pn (i32.const 256))))
          (call $dist16
            (i32.add (local.get $xr) (i32.shl (local.get $p0) (i32.const 2))) (local.get $xs) (local.get $g) (local.get $pn)
            (i32.add (local.get $ct) (i32.shl (i32.mul (local.get $p0) (local.get $kp)) (i32.const 2))) (local.get $kp)
            (local.get $dr) (i32.eqz (local.get $p0)))
          (br_if $slices (i32.lt_u (local.tee $p0 (i32.add (local.get $p0) (local.get $pn))) (local.get $pairs))))
        (call $argmin16 (local.get $dr) (local.get $kp) (local.get $g) (local.get $hp)
          (i32.add (local.get $scp) (i32.shl (local.get $r) (i32.const 2)))
          (i32.add (local.get $tp) (i32.shl (local.get $r) (i32.const 3)))
          (i32.add (local.get $outp) (i32.shl (local.get $r) (i32.const 2)))
          (i32.add (local.get $sp) (i32.shl (local.get $r) (i32.const 2))))
        (local.set $r (i32.add (local.get $r) (local.get $g)))
        (br $groups))))

  ;; I[r][j] (i32, at op + (r·kp + j)·4) = Σ_{p < pn} x̃ pair p of row r · c̃ pair p of column j,
  ;; plus the I already there unless `first`. Tiles of 2 rows × 16 columns; leftover rows one at a time.
  (func $dist16
    (param $xp i32) (param $xs i32) (param $rows i32) (param $pn i32)
    (param $ct i32) (param $kp i32) (param $op i32) (param $first i32)
    (local $rowb i32) (local $jb i32) (local $r i32) (local $d i32) (local $p i32) (local $o i32)
    (local $x0 i32) (local $x1 i32) (local $a0 v128) (local $a1 v128)
    (local $c0 v128) (local $c1 v128) (local $c2 v128) (local $c3 v128)
    (local $s0_0 v128) (local $s0_1 v128) (local $s0_2 v128) (local $s0_3 v128)
    (local $s1_0 v128) (local $s1_1 v128) (local $s1_2 v128) (local $s1_3 v128)
    (local.set $rowb (i32.shl (local.get $kp) (i32.const 2)))
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
                (local.set $s0_0 (v128.const i32x4 0 0 0 0))
                (local.set $s0_1 (v128.const i32x4 0 0 0 0))
                (local.set $s0_2 (v128.const i32x4 0 0 0 0))
                (local.set $s0_3 (v128.const i32x4 0 0 0 0))
                (local.set $s1_0 (v128.const i32x4 0 0 0 0))
                (local.set $s1_1 (v128.const i32x4 0 0 0 0))
                (local.set $s1_2 (v128.const i32x4 0 0 0 0))
                (local.set $s1_3 (v128.const i32x4 0 0 0 0)))
              (else
                (local.set $s0_0 (v128.load offset=0 (local.get $o)))
                (local.set $s0_1 (v128.load offset=16 (local.get $o)))
                (local.set $s0_2 (v128.load offset=32 (local.get $o)))
                (local.set $s0_3 (v128.load offset=48 (local.get $o)))
                (local.set $p (i32.add (local.get $o) (local.get $rowb)))
                (local.set $s1_0 (v128.load offset=0 (local.get $p)))
                (local.set $s1_1 (v128.load offset=16 (local.get $p)))
                (local.set $s1_2 (v128.load offset=32 (local.get $p)))
                (local.set $s1_3 (v128.load offset=48 (local.get $p)))))
            (local.set $p (i32.add (local.get $ct) (local.get $jb)))
            (local.set $x0 (i32.add (local.get $xp) (i32.mul (local.get $r) (local.get $xs))))
            (local.set $x1 (i32.add (local.get $x0) (local.get $xs)))
            (local.set $d (local.get $pn))
            (loop $dims
              (local.set $c0 (v128.load offset=0 (local.get $p)))
              (local.set $c1 (v128.load offset=16 (local.get $p)))
              (local.set $c2 (v128.load offset=32 (local.get $p)))
              (local.set $c3 (v128.load offset=48 (local.get $p)))
              (local.set $a0 (v128.load32_splat (local.get $x0)))
              (local.set $a1 (v128.load32_splat (local.get $x1)))
              (local.set $s0_0 (i32x4.add (local.get $s0_0) (i32x4.dot_i16x8_s (local.get $a0) (local.get $c0))))
              (local.set $s0_1 (i32x4.add (local.get $s0_1) (i32x4.dot_i16x8_s (local.get $a0) (local.get $c1))))
              (local.set $s0_2 (i32x4.add (local.get $s0_2) (i32x4.dot_i16x8_s (local.get $a0) (local.get $c2))))
              (local.set $s0_3 (i32x4.add (local.get $s0_3) (i32x4.dot_i16x8_s (local.get $a0) (local.get $c3))))
              (local.set $s1_0 (i32x4.add (local.get $s1_0) (i32x4.dot_i16x8_s (local.get $a1) (local.get $c0))))
              (local.set $s1_1 (i32x4.add (local.get $s1_1) (i32x4.dot_i16x8_s (local.get $a1) (local.get $c1))))
              (local.set $s1_2 (i32x4.add (local.get $s1_2) (i32x4.dot_i16x8_s (local.get $a1) (local.get $c2))))
              (local.set $s1_3 (i32x4.add (local.get $s1_3) (i32x4.dot_i16x8_s (local.get $a1) (local.get $c3))))
              (local.set $p (i32.add (local.get $p) (local.get $rowb)))
              (local.set $x0 (i32.add (local.get $x0) (i32.const 4)))
              (local.set $x1 (i32.add (local.get $x1) (i32.const 4)))
              (br_if $dims (local.tee $d (i32.sub (local.get $d) (i32.const 1)))))
            (v128.store offset=0 (local.get $o) (local.get $s0_0))
            (v128.store offset=16 (local.get $o) (local.get $s0_1))
            (v128.store offset=32 (local.get $o) (local.get $s0_2))
            (v128.store offset=48 (local.get $o) (local.get $s0_3))
            (local.set $o (i32.add (local.get $o) (local.get $rowb)))
            (v128.store offset=0 (local.get $o) (local.get $s1_0))
            (v128.store offset=16 (local.get $o) (local.get $s1_1))
            (v128.store offset=32 (local.get $o) (local.get $s1_2))
            (v128.store offset=48 (local.get $o) (local.get $s1_3))
            (local.set $r (i32.add (local.get $r) (i32.const 2)))
            (br $tiles)))
        (block $rest_done
          (loop $rest
            (br_if $rest_done (i32.ge_u (local.get $r) (local.get $rows)))
            (local.set $o (i32.add (i32.add (local.get $op) (i32.mul (local.get $r) (local.get $rowb))) (local.get $jb)))
            (if (local.get $first)
              (then
                (local.set $s0_0 (v128.const i32x4 0 0 0 0))
                (local.set $s0_1 (v128.const i32x4 0 0 0 0))
                (local.set $s0_2 (v128.const i32x4 0 0 0 0))
                (local.set $s0_3 (v128.const i32x4 0 0 0 0)))
              (else
                (local.set $s0_0 (v128.load offset=0 (local.get $o)))
                (local.set $s0_1 (v128.load offset=16 (local.get $o)))
                (local.set $s0_2 (v128.load offset=32 (local.get $o)))
                (local.set $s0_3 (v128.load offset=48 (local.get $o)))))
            (local.set $p (i32.add (local.get $ct) (local.get $jb)))
            (local.set $x0 (i32.add (local.get $xp) (i32.mul (local.get $r) (local.get $xs))))
            (local.set $d (local.get $pn))
            (loop $dims1
              (local.set $a0 (v128.load32_splat (local.get $x0)))
              (local.set $s0_0 (i32x4.add (local.get $s0_0) (i32x4.dot_i16x8_s (local.get $a0) (v128.load offset=0 (local.get $p)))))
              (local.set $s0_1 (i32x4.add (local.get $s0_1) (i32x4.dot_i16x8_s (local.get $a0) (v128.load offset=16 (local.get $p)))))
              (local.set $s0_2 (i32x4.add (local.get $s0_2) (i32x4.dot_i16x8_s (local.get $a0) (v128.load offset=32 (local.get $p)))))
              (local.set $s0_3 (i32x4.add (local.get $s0_3) (i32x4.dot_i16x8_s (local.get $a0) (v128.load offset=48 (local.get $p)))))
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

  ;; Per row r < rows: F̂_j = h_j − s_r·f32(I[r][j]) over the row's block (written back as f32),
  ;; then out[r] = the lowest column of the smallest F̂ when every other column's 2F̂ is more than
  ;; T_r above it (and the smallest is finite), else −1; sp[r] = the second smallest F̂. s_r f32
  ;; at scp + 4r, T_r f64 at tp + 8r (NaN: never certified).
  (func $argmin16
    (param $dp i32) (param $kp i32) (param $rows i32) (param $hp i32)
    (param $scp i32) (param $tp i32) (param $outp i32) (param $sp i32)
    (local $r i32) (local $q i32) (local $h i32) (local $end i32)
    (local $s v128) (local $f v128) (local $m1 v128) (local $m2 v128) (local $idx v128) (local $jv v128)
    (local $best f32) (local $bi i32) (local $second f32)
    (block $done
      (loop $rows_loop
        (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $s (f32x4.splat (f32.load (i32.add (local.get $scp) (i32.shl (local.get $r) (i32.const 2))))))
        (local.set $m1 (v128.const f32x4 inf inf inf inf))
        (local.set $m2 (v128.const f32x4 inf inf inf inf))
        (local.set $idx (v128.const i32x4 0 0 0 0))
        (local.set $jv (v128.const i32x4 0 1 2 3))
        (local.set $q (i32.add (local.get $dp) (i32.shl (i32.mul (local.get $r) (local.get $kp)) (i32.const 2))))
        (local.set $end (i32.add (local.get $q) (i32.shl (local.get $kp) (i32.const 2))))
        (local.set $h (local.get $hp))
        (loop $scan
          (local.set $f (f32x4.sub (v128.load (local.get $h))
                                   (f32x4.mul (local.get $s) (f32x4.convert_i32x4_s (v128.load (local.get $q))))))
          (v128.store (local.get $q) (local.get $f))
          (local.set $m2 (f32x4.pmin (local.get $m2) (f32x4.pmax (local.get $m1) (local.get $f))))
          (local.set $idx (v128.bitselect (local.get $jv) (local.get $idx) (f32x4.lt (local.get $f) (local.get $m1))))
          (local.set $m1 (f32x4.pmin (local.get $m1) (local.get $f)))
          (local.set $jv (i32x4.add (local.get $jv) (v128.const i32x4 4 4 4 4)))
          (local.set $h (i32.add (local.get $h) (i32.const 16)))
          (br_if $scan (i32.lt_u (local.tee $q (i32.add (local.get $q) (i32.const 16))) (local.get $end))))
        (call $lanes (local.get $m1) (local.get $m2) (local.get $idx))
        local.set $second
        local.set $bi
        local.set $best
        (i32.store (i32.add (local.get $outp) (i32.shl (local.get $r) (i32.const 2)))
          (select (local.get $bi) (i32.const -1)
            (i32.and
              (f64.lt (f64.abs (f64.promote_f32 (local.get $best))) (f64.const inf))
              (f64.gt (f64.mul (f64.const 2) (f64.sub (f64.promote_f32 (local.get $second)) (f64.promote_f32 (local.get $best))))
                      (f64.load (i32.add (local.get $tp) (i32.shl (local.get $r) (i32.const 3))))))))
        (f32.store (i32.add (local.get $sp) (i32.shl (local.get $r) (i32.const 2))) (local.get $second))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rows_loop))))

  ;; Quantises `rows` f32 rows (row r at xp + r·xs, `width` values) to i16 for `nearest16`: per
  ;; row, m = max |x_d| and the power of two s ≥ m/q (s = 1 when m = 0); x̃_d = round-to-even(x_d/s)
  ;; (exact scaling by a power of two, so |x_d − s·x̃_d| ≤ s/2 and |x̃_d| ≤ q), written at
  ;; op + r·os (os bytes, a multiple of 16 ≥ 2·width rounded up to 8 values; the values past
  ;; `width` are zero); s (f64) at scp + 8r. A row holding NaN or ±Inf, or whose s is outside
  ;; [2⁻⁶⁰, 2⁶⁰], gets s = NaN and zeros (the caller never certifies it).
  (func (export "quantize16")
    (param $xp i32) (param $xs i32) (param $rows i32) (param $width i32) (param $q i32)
    (param $op i32) (param $os i32) (param $scp i32)
    (local $r i32) (local $x i32) (local $o i32) (local $d i32) (local $w4 i32) (local $w8 i32)
    (local $mv v128) (local $m f32) (local $v f64) (local $bits i64) (local $s f64)
    (local $inv f32) (local $iv v128) (local $a v128) (local $b v128) (local $nan v128)
    (local.set $w4 (i32.and (local.get $width) (i32.const -4)))
    (local.set $w8 (i32.and (local.get $width) (i32.const -8)))
    (block $done
      (loop $rows_loop
        (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $x (i32.add (local.get $xp) (i32.mul (local.get $r) (local.get $xs))))
        (local.set $o (i32.add (local.get $op) (i32.mul (local.get $r) (local.get $os))))
        ;; m = max |x_d| (pmax is one instruction; a NaN is caught by the x ≠ x mask instead;
        ;; f32.max over the lanes and the tail propagates one there).
        (local.set $mv (v128.const f32x4 0 0 0 0))
        (local.set $nan (v128.const i32x4 0 0 0 0))
        (local.set $d (i32.const 0))
        (block $m4_done
          (loop $m4
            (br_if $m4_done (i32.ge_u (local.get $d) (local.get $w4)))
            (local.set $a (v128.load (i32.add (local.get $x) (i32.shl (local.get $d) (i32.const 2)))))
            (local.set $mv (f32x4.pmax (local.get $mv) (f32x4.abs (local.get $a))))
            (local.set $nan (v128.or (local.get $nan) (f32x4.ne (local.get $a) (local.get $a))))
            (local.set $d (i32.add (local.get $d) (i32.const 4)))
            (br $m4)))
        (local.set $m (f32.max (f32.max (f32x4.extract_lane 0 (local.get $mv)) (f32x4.extract_lane 1 (local.get $mv)))
                               (f32.max (f32x4.extract_lane 2 (local.get $mv)) (f32x4.extract_lane 3 (local.get $mv)))))
        (if (v128.any_true (local.get $nan)) (then (local.set $m (f32.const nan))))
        (block $mt_done
          (loop $mt
            (br_if $mt_done (i32.ge_u (local.get $d) (local.get $width)))
            (local.set $m (f32.max (local.get $m) (f32.abs (f32.load (i32.add (local.get $x) (i32.shl (local.get $d) (i32.const 2)))))))
            (local.set $d (i32.add (local.get $d) (i32.const 1)))
            (br $mt)))
        ;; s = the smallest power of two ≥ m/q: v itself when its mantissa is zero, else the next
        ;; exponent up (a subnormal or overflowing v lands outside the accepted range).
        (local.set $s (f64.const 1))
        (if (f32.gt (local.get $m) (f32.const 0))
          (then
            (local.set $v (f64.div (f64.promote_f32 (local.get $m)) (f64.convert_i32_s (local.get $q))))
            (local.set $bits (i64.reinterpret_f64 (local.get $v)))
            (local.set $s
              (select (local.get $v)
                (f64.reinterpret_i64 (i64.add (i64.and (local.get $bits) (i64.const 0x7FF0000000000000)) (i64.const 0x0010000000000000)))
                (i64.eqz (i64.and (local.get $bits) (i64.const 0x000FFFFFFFFFFFFF)))))))
        (if (i32.and (f32.eq (local.get $m) (local.get $m))
              (i32.and (f64.ge (local.get $s) (f64.const 0x1p-60)) (f64.le (local.get $s) (f64.const 0x1p60))))
          (then
            (f64.store (i32.add (local.get $scp) (i32.shl (local.get $r) (i32.const 3))) (local.get $s))
            (local.set $inv (f32.demote_f64 (f64.div (f64.const 1) (local.get $s))))
            (local.set $iv (f32x4.splat (local.get $inv)))
            (local.set $d (i32.const 0))
            (block $q8_done
              (loop $q8
                (br_if $q8_done (i32.ge_u (local.get $d) (local.get $w8)))
                (local.set $a (v128.load (i32.add (local.get $x) (i32.shl (local.get $d) (i32.const 2)))))
                (local.set $b (v128.load offset=16 (i32.add (local.get $x) (i32.shl (local.get $d) (i32.const 2)))))
                ;; x/s + 1.5·2²³ rounds x/s to the nearest integer (ties to even) in the low
                ;; mantissa bits (|x/s| ≤ q < 2²²); subtracting the constant's bits leaves it.
                (v128.store (i32.add (local.get $o) (i32.shl (local.get $d) (i32.const 1)))
                  (i16x8.narrow_i32x4_s
                    (i32x4.sub (f32x4.add (f32x4.mul (local.get $a) (local.get $iv)) (v128.const f32x4 12582912 12582912 12582912 12582912))
                               (v128.const i32x4 0x4B400000 0x4B400000 0x4B400000 0x4B400000))
                    (i32x4.sub (f32x4.add (f32x4.mul (local.get $b) (local.get $iv)) (v128.const f32x4 12582912 12582912 12582912 12582912))
                               (v128.const i32x4 0x4B400000 0x4B400000 0x4B400000 0x4B400000))))
                (local.set $d (i32.add (local.get $d) (i32.const 8)))
                (br $q8)))
            (block $qt_done
              (loop $qt
                (br_if $qt_done (i32.ge_u (local.get $d) (local.get $width)))
                (i32.store16 (i32.add (local.get $o) (i32.shl (local.get $d) (i32.const 1)))
                  (i32.trunc_sat_f32_s (f32.nearest (f32.mul (f32.load (i32.add (local.get $x) (i32.shl (local.get $d) (i32.const 2)))) (local.get $inv)))))
                (local.set $d (i32.add (local.get $d) (i32.const 1)))
                (br $qt)))
            ;; Zeros from `width` to the end of the row's last 8-value group.
            (block $z_done
              (loop $z
                (br_if $z_done (i32.eqz (i32.and (local.get $d) (i32.const 7))))
                (i32.store16 (i32.add (local.get $o) (i32.shl (local.get $d) (i32.const 1))) (i32.const 0))
                (local.set $d (i32.add (local.get $d) (i32.const 1)))
                (br $z))))
          (else
            (f64.store (i32.add (local.get $scp) (i32.shl (local.get $r) (i32.const 3))) (f64.const nan))
            (local.set $d (i32.const 0))
            (block $zr_done
              (loop $zr
                (br_if $zr_done (i32.ge_u (local.get $d) (local.get $os)))
                (v128.store (i32.add (local.get $o) (local.get $d)) (v128.const i32x4 0 0 0 0))
                (local.set $d (i32.add (local.get $d) (i32.const 16)))
                (br $zr)))))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rows_loop))))

  ;; Per row r < rows (row at xp + r·xs, n f32 values): Σ x_d² and Σ |x_d| in float64 (products
  ;; of f32 values are exact in float64; each sum's relative error ≤ n·2⁻⁵³), written at
  ;; outp + 16r and outp + 16r + 8 — the norms `nearest16`'s caller derives the margin T from.
  (func (export "row_norms")
    (param $xp i32) (param $xs i32) (param $rows i32) (param $n i32) (param $outp i32)
    (local $r i32) (local $x i32) (local $d i32) (local $n4 i32)
    (local $a v128) (local $lo v128) (local $hi v128) (local $sq v128) (local $l1 v128)
    (local $ssq f64) (local $sl1 f64) (local $f f64)
    (local.set $n4 (i32.and (local.get $n) (i32.const -4)))
    (block $done
      (loop $rows_loop
        (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $x (i32.add (local.get $xp) (i32.mul (local.get $r) (local.get $xs))))
        (local.set $sq (v128.const f64x2 0 0))
        (local.set $l1 (v128.const f64x2 0 0))
        (local.set $d (i32.const 0))
        (block $v_done
          (loop $v
            (br_if $v_done (i32.ge_u (local.get $d) (local.get $n4)))
            (local.set $a (v128.load (i32.add (local.get $x) (i32.shl (local.get $d) (i32.const 2)))))
            (local.set $lo (f64x2.promote_low_f32x4 (local.get $a)))
            (local.set $hi (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $a) (local.get $a))))
            (local.set $sq (f64x2.add (local.get $sq) (f64x2.add (f64x2.mul (local.get $lo) (local.get $lo)) (f64x2.mul (local.get $hi) (local.get $hi)))))
            (local.set $l1 (f64x2.add (local.get $l1) (f64x2.add (f64x2.abs (local.get $lo)) (f64x2.abs (local.get $hi)))))
            (local.set $d (i32.add (local.get $d) (i32.const 4)))
            (br $v)))
        (local.set $ssq (f64.add (f64x2.extract_lane 0 (local.get $sq)) (f64x2.extract_lane 1 (local.get $sq))))
        (local.set $sl1 (f64.add (f64x2.extract_lane 0 (local.get $l1)) (f64x2.extract_lane 1 (local.get $l1))))
        (block $t_done
          (loop $t
            (br_if $t_done (i32.ge_u (local.get $d) (local.get $n)))
            (local.set $f (f64.promote_f32 (f32.load (i32.add (local.get $x) (i32.shl (local.get $d) (i32.const 2))))))
            (local.set $ssq (f64.add (local.get $ssq) (f64.mul (local.get $f) (local.get $f))))
            (local.set $sl1 (f64.add (local.get $sl1) (f64.abs (local.get $f))))
            (local.set $d (i32.add (local.get $d) (i32.const 1)))
            (br $t)))
        (f64.store (i32.add (local.get $outp) (i32.shl (local.get $r) (i32.const 4))) (local.get $ssq))
        (f64.store offset=8 (i32.add (local.get $outp) (i32.shl (local.get $r) (i32.const 4))) (local.get $sl1))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rows_loop))))
)
