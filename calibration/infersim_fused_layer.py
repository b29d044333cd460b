#!/usr/bin/env python3
"""The kernels of a dense decoder layer as vLLM V1 runs them, in Triton, for the calibration kit.

vLLM V1 (v0.14, Llama-style models, FlashAttention backend on Hopper, CUDA graphs) runs each layer as: a fused
residual add and RMSNorm (one pass: residual += x, x = rmsnorm(residual) * w), the QKV GEMM (cuBLAS), rotary embedding
applied in place to q and k from a cos/sin cache indexed by position, the KV-cache write (each token's k and v to its
slot of a paged cache laid out [blocks, block_size, kv_heads, head_dim], block size 16), attention over the paged
cache (FlashAttention; decode split over the keys, flash-decoding, at most 16 splits under CUDA graphs), the output
GEMM, a second fused add and RMSNorm, the gate/up GEMM, SiLU-and-multiply in one pass, and the down GEMM. The GEMMs stay
cuBLAS here as in vLLM; this module holds the rest:

  rms_norm          RMSNorm of each row, optionally adding the residual first and writing it back (fused add)
  rotary_           neox-style rotary embedding of the q and k heads of a fused QKV row, in place
  cache_write       each token's k and v (from the fused QKV row) to its slot of the paged cache
  silu_and_mul      silu(gate) * up of a fused gate/up row
  PagedDecode       decode attention over a paged KV cache: one program per (sequence, KV head, split) runs
                    online softmax over its share of the sequence's blocks for all query heads of the group (tensor
                    cores, the group padded to 16 rows), a second kernel merges the splits by their log-sum-exp. Splits
                    and tile are picked per shape by timing a few candidates (FlashAttention picks splits by a
                    heuristic and ships tuned tiles).

`check()` compares every kernel with a float32 PyTorch reference on fresh random inputs.
"""
import math

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

PAGE = 16                 # vLLM's default KV block size
MAX_SPLITS = 16           # vLLM's cap on FlashAttention splits under CUDA graphs
TILES = [(64, 4, 3), (128, 8, 3), (32, 4, 4)]   # (keys per tile, warps, pipeline stages) candidates


@triton.jit
def _rms_norm_kernel(x_ptr, res_ptr, w_ptr, out_ptr, stride_x, stride_r, stride_o, N, eps, ADD: tl.constexpr,
                     BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    ok = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=ok, other=0.0).to(tl.float32)
    if ADD:
        x += tl.load(res_ptr + row * stride_r + cols, mask=ok, other=0.0).to(tl.float32)
        tl.store(res_ptr + row * stride_r + cols, x.to(res_ptr.dtype.element_ty), mask=ok)
    inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=ok, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * stride_o + cols, (x * inv * w).to(out_ptr.dtype.element_ty), mask=ok)


@triton.jit
def _rotary_kernel(qkv_ptr, pos_ptr, cos_sin_ptr, stride_t, HEADS, D: tl.constexpr, HP: tl.constexpr):
    """One token: its q heads then k heads (contiguous at the start of the fused QKV row), rotated by its position."""
    tok = tl.program_id(0).to(tl.int64)
    pos = tl.load(pos_ptr + tok).to(tl.int64)
    i = tl.arange(0, D // 2)
    cos = tl.load(cos_sin_ptr + pos * D + i).to(tl.float32)
    sin = tl.load(cos_sin_ptr + pos * D + D // 2 + i).to(tl.float32)
    heads = tl.arange(0, HP)
    ok = heads[:, None] < HEADS
    base = qkv_ptr + tok * stride_t + heads[:, None] * D
    x1 = tl.load(base + i[None, :], mask=ok, other=0.0).to(tl.float32)
    x2 = tl.load(base + D // 2 + i[None, :], mask=ok, other=0.0).to(tl.float32)
    tl.store(base + i[None, :], (x1 * cos[None, :] - x2 * sin[None, :]).to(qkv_ptr.dtype.element_ty), mask=ok)
    tl.store(base + D // 2 + i[None, :], (x2 * cos[None, :] + x1 * sin[None, :]).to(qkv_ptr.dtype.element_ty), mask=ok)


@triton.jit
def _cache_write_kernel(qkv_ptr, slot_ptr, k_ptr, v_ptr, stride_t, NH, NKV, D: tl.constexpr, KP: tl.constexpr):
    tok = tl.program_id(0).to(tl.int64)
    slot = tl.load(slot_ptr + tok).to(tl.int64)
    heads = tl.arange(0, KP)
    d = tl.arange(0, D)
    ok = heads[:, None] < NKV
    src = qkv_ptr + tok * stride_t + (NH + heads[:, None]) * D + d[None, :]
    dst = slot * NKV * D + heads[:, None] * D + d[None, :]
    tl.store(k_ptr + dst, tl.load(src, mask=ok), mask=ok)
    tl.store(v_ptr + dst, tl.load(src + NKV * D, mask=ok), mask=ok)


@triton.jit
def _silu_mul_kernel(gu_ptr, out_ptr, N, stride_in, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ok = cols < N
    g = tl.load(gu_ptr + row * stride_in + cols, mask=ok, other=0.0).to(tl.float32)
    u = tl.load(gu_ptr + row * stride_in + N + cols, mask=ok, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * stride_out + cols, (g / (1.0 + tl.exp(-g)) * u).to(out_ptr.dtype.element_ty), mask=ok)


@triton.jit
def _paged_decode_kernel(q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, out_ptr, part_ptr, lse_ptr, scale,
                         stride_qb, stride_ob, stride_table, NKV, G, splits,
                         GP: tl.constexpr, D: tl.constexpr, PAGE_SIZE: tl.constexpr, BLOCK_N: tl.constexpr,
                         DIRECT: tl.constexpr):
    """One (sequence, KV head, split): online softmax of the group's G query heads over the split's keys. DIRECT (one
    split): writes the normalised output; otherwise the split's normalised output and log-sum-exp for the merge."""
    b = tl.program_id(0).to(tl.int64)
    h = tl.program_id(1)
    s = tl.program_id(2)
    seq_len = tl.load(lens_ptr + b)
    per_split = tl.cdiv(tl.cdiv(seq_len, splits), BLOCK_N) * BLOCK_N
    start = s * per_split
    end = tl.minimum(start + per_split, seq_len)
    g = tl.arange(0, GP)
    d = tl.arange(0, D)
    heads = h * G + g
    q = tl.load(q_ptr + b * stride_qb + heads[:, None] * D + d[None, :], mask=g[:, None] < G, other=0.0)
    m = tl.full([GP], float("-inf"), dtype=tl.float32)
    l = tl.zeros([GP], dtype=tl.float32)
    acc = tl.zeros([GP, D], dtype=tl.float32)
    for n0 in range(start, end, BLOCK_N):
        keys = n0 + tl.arange(0, BLOCK_N)
        valid = keys < end
        page = tl.load(table_ptr + b * stride_table + keys // PAGE_SIZE, mask=valid, other=0).to(tl.int64)
        rows = ((page * PAGE_SIZE + keys % PAGE_SIZE) * NKV + h) * D
        k = tl.load(k_ptr + rows[:, None] + d[None, :], mask=valid[:, None], other=0.0)
        scores = tl.dot(q, tl.trans(k)) * scale
        scores = tl.where(valid[None, :], scores, float("-inf"))
        m_new = tl.maximum(m, tl.max(scores, axis=1))
        p = tl.exp(scores - m_new[:, None])
        alpha = tl.exp(m - m_new)
        l = l * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + rows[:, None] + d[None, :], mask=valid[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    live = l > 0
    o = acc / tl.where(live, l, 1.0)[:, None]
    ok = g[:, None] < G
    if DIRECT:
        tl.store(out_ptr + b * stride_ob + heads[:, None] * D + d[None, :], o.to(out_ptr.dtype.element_ty), mask=ok)
    else:
        nh = NKV * G
        row = (b * nh + heads) * splits + s
        tl.store(part_ptr + row[:, None] * D + d[None, :], o, mask=ok)
        tl.store(lse_ptr + row, tl.where(live, m + tl.log(tl.where(live, l, 1.0)), float("-inf")), mask=g < G)


@triton.jit
def _merge_kernel(part_ptr, lse_ptr, out_ptr, stride_ob, nh, splits, D: tl.constexpr, SP: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    head = tl.program_id(1)
    s = tl.arange(0, SP)
    ok = s < splits
    row = (b * nh + head) * splits
    lse = tl.load(lse_ptr + row + s, mask=ok, other=float("-inf"))
    w = tl.exp(lse - tl.max(lse, axis=0))
    w = w / tl.sum(w, axis=0)
    d = tl.arange(0, D)
    part = tl.load(part_ptr + (row + s)[:, None] * D + d[None, :], mask=ok[:, None], other=0.0)
    o = tl.sum(part * w[:, None], axis=0)
    tl.store(out_ptr + b * stride_ob + head * D + d, o.to(out_ptr.dtype.element_ty))


def rms_norm(x, weight, eps=1e-5, residual=None, out=None):
    """rmsnorm(x) * weight; with residual: residual += x first (in place) and the norm is of the sum."""
    rows, n = x.shape
    out = torch.empty_like(x) if out is None else out
    block = triton.next_power_of_2(n)
    res = residual if residual is not None else x
    _rms_norm_kernel[(rows,)](x, res, weight, out, x.stride(0), res.stride(0), out.stride(0), n, eps,
                              ADD=residual is not None, BLOCK=block, num_warps=8 if block >= 4096 else 4)
    return out


def rotary_(qkv, positions, cos_sin, nh, nkv, d):
    """Rotates the q and k heads of each fused QKV row by its position, in place; cos_sin: [positions, d] (cos | sin)."""
    heads = nh + nkv
    _rotary_kernel[(qkv.shape[0],)](qkv, positions, cos_sin, qkv.stride(0), heads, D=d,
                                    HP=triton.next_power_of_2(heads), num_warps=4)


def cache_write(qkv, slots, k_cache, v_cache, nh, nkv, d):
    """Writes each token's k and v to slot slots[t] of the paged caches ([blocks, PAGE, nkv, d] each)."""
    _cache_write_kernel[(qkv.shape[0],)](qkv, slots, k_cache, v_cache, qkv.stride(0), nh, nkv, D=d,
                                         KP=triton.next_power_of_2(nkv), num_warps=4)


def silu_and_mul(gu):
    t, two_n = gu.shape
    n = two_n // 2
    out = torch.empty(t, n, device=gu.device, dtype=gu.dtype)
    block = min(2048, triton.next_power_of_2(n))
    _silu_mul_kernel[(t, triton.cdiv(n, block))](gu, out, n, gu.stride(0), out.stride(0), BLOCK=block, num_warps=4)
    return out


class PagedDecode:
    """Decode attention over a paged KV cache for one model shard (nh query heads, nkv KV heads, head_dim d)."""

    def __init__(self, nh, nkv, d, device):
        self.nh, self.nkv, self.d = nh, nkv, d
        self.g = nh // nkv
        self.gp = max(16, triton.next_power_of_2(self.g))
        self.scale = 1.0 / math.sqrt(d)
        self.sms = torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda" else 132
        self.configs = {}   # (batch, max keys) -> (splits, tile)

    def split_candidates(self, b, max_len):
        """Splits that fill the GPU's multiprocessors with (sequence, KV head, split) programs, as flash-decoding does:
        none when the sequences and heads alone fill most of them; else up to MAX_SPLITS, at least 256 keys a split."""
        work = b * self.nkv
        most = max(1, min(MAX_SPLITS, max_len // 256))
        if work >= 0.8 * self.sms or most == 1:
            return [1]
        want = min(most, triton.cdiv(2 * self.sms, work))
        return sorted({max(1, want // 2), want})

    def launch(self, q, k_cache, v_cache, table, lens, out, splits, tile):
        b = q.shape[0]
        block_n, warps, stages = tile
        direct = splits == 1
        part = lse = out
        if not direct:
            part = torch.empty(b * self.nh * splits, self.d, device=q.device, dtype=torch.float32)
            lse = torch.empty(b * self.nh * splits, device=q.device, dtype=torch.float32)
        _paged_decode_kernel[(b, self.nkv, splits)](
            q, k_cache, v_cache, table, lens, out, part, lse, self.scale, q.stride(0), out.stride(0), table.stride(0),
            self.nkv, self.g, splits, GP=self.gp, D=self.d, PAGE_SIZE=PAGE, BLOCK_N=block_n, DIRECT=direct,
            num_warps=warps, num_stages=stages)
        if not direct:
            _merge_kernel[(b, self.nh)](part, lse, out, out.stride(0), self.nh, splits, D=self.d,
                                        SP=triton.next_power_of_2(splits), num_warps=4)

    def __call__(self, q, k_cache, v_cache, table, lens, max_len, out):
        """q [b, nh, d] (rows may be strided); out [b, nh * d]; table [b, pages] int32; lens [b] int32; max_len: the
        longest sequence (a host number, as the engine passes it, so a captured graph needs no device read)."""
        key = (q.shape[0], max_len)
        if key not in self.configs:
            self.configs[key] = self.tune(q, k_cache, v_cache, table, lens, max_len, out)
        splits, tile = self.configs[key]
        self.launch(q, k_cache, v_cache, table, lens, out, splits, tile)

    def tune(self, q, k_cache, v_cache, table, lens, max_len, out):
        if q.device.type != "cuda":
            return self.split_candidates(q.shape[0], max_len)[-1], TILES[0]
        timed = []
        for splits in self.split_candidates(q.shape[0], max_len):
            for tile in TILES:
                try:
                    ms = triton.testing.do_bench(lambda: self.launch(q, k_cache, v_cache, table, lens, out, splits, tile),
                                                 warmup=3, rep=10, return_mode="median")
                    timed.append((ms, splits, tile))
                except Exception:  # out of shared memory or registers on this GPU: not a candidate here
                    continue
        best = min(timed)
        return best[1], best[2]


def rotary_cache(positions, d, device, base=500000.0):
    inv = 1.0 / (base ** (torch.arange(0, d // 2, device=device, dtype=torch.float32) * 2 / d))
    angles = torch.arange(positions, device=device, dtype=torch.float32)[:, None] * inv[None, :]
    return torch.cat([angles.cos(), angles.sin()], dim=-1).to(torch.bfloat16)


def _rel(out, ref):
    err = (torch.linalg.norm(out.float() - ref.float()) / torch.linalg.norm(ref.float())).item()
    assert math.isfinite(err), "non-finite output"
    return err


def check(device, say=print):
    """Each kernel against a float32 PyTorch reference on fresh random inputs; every output element is poisoned
    before the run so an unwritten one fails. Returns the worst relative error (bf16 outputs: 1e-3 to 1e-2 is right)."""
    bf = torch.bfloat16
    errors = {}
    # fused add + RMSNorm, and plain RMSNorm
    for rows, n in ((3, 4096), (17, 1536), (5, 8192)):
        x = torch.randn(rows, n, device=device, dtype=bf)
        r = torch.randn(rows, n, device=device, dtype=bf)
        w = torch.rand(n, device=device, dtype=bf) + 0.5
        s = x.float() + r.float()
        ref = s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-5) * w.float()
        res = r.clone()
        out = torch.full_like(x, float("nan"))
        rms_norm(x, w, residual=res, out=out)
        errors["add+rmsnorm"] = max(errors.get("add+rmsnorm", 0), _rel(out, ref), _rel(res, s))
        ref = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5) * w.float()
        errors["rmsnorm"] = max(errors.get("rmsnorm", 0), _rel(rms_norm(x, w), ref))
    # rotary, KV-cache write, SiLU-and-mul on a fused QKV / gate-up row
    for t, nh, nkv, d in ((5, 32, 8, 128), (9, 12, 2, 128), (4, 32, 32, 128), (3, 16, 2, 64)):
        qkv = torch.randn(t, (nh + 2 * nkv) * d, device=device, dtype=bf)
        pos = torch.randint(0, 4096, (t,), device=device)
        cs = rotary_cache(4096, d, device)
        cos, sin = cs[pos, : d // 2].float()[:, None], cs[pos, d // 2:].float()[:, None]
        ref = qkv.float().clone()
        for lo, heads in ((0, nh), (nh * d, nkv)):
            part = ref[:, lo: lo + heads * d].view(t, heads, d)
            x1, x2 = part[..., : d // 2].clone(), part[..., d // 2:].clone()
            part[..., : d // 2] = x1 * cos - x2 * sin
            part[..., d // 2:] = x2 * cos + x1 * sin
        got = qkv.clone()
        rotary_(got, pos, cs, nh, nkv, d)
        errors["rotary"] = max(errors.get("rotary", 0), _rel(got, ref))
        blocks = 8
        kc = torch.full((blocks, PAGE, nkv, d), float("nan"), device=device, dtype=bf)
        vc = torch.full_like(kc, float("nan"))
        slots = torch.randperm(blocks * PAGE, device=device)[:t]
        cache_write(got, slots, kc, vc, nh, nkv, d)
        k_ref = got[:, nh * d:(nh + nkv) * d].view(t, nkv, d)
        v_ref = got[:, (nh + nkv) * d:].view(t, nkv, d)
        errors["cache write"] = max(errors.get("cache write", 0), _rel(kc.view(-1, nkv, d)[slots], k_ref),
                                    _rel(vc.view(-1, nkv, d)[slots], v_ref))
        gu = torch.randn(t, 2 * 3 * d * 7, device=device, dtype=bf)
        g, u = gu.float().chunk(2, dim=-1)
        errors["silu*mul"] = max(errors.get("silu*mul", 0), _rel(silu_and_mul(gu), F.silu(g) * u))
    # paged decode attention: MHA and grouped heads, lengths off the page and tile boundaries, one and several splits
    # (Triton's CPU interpreter multiplies bf16 tiles wrongly: a logic check on the CPU runs them in fp16)
    half = bf if device.type == "cuda" else torch.float16
    for b, nh, nkv, d, lengths in ((3, 8, 8, 128, (1, 17, 300)), (4, 32, 8, 128, (16, 70, 513, 1000)),
                                   (2, 14, 2, 128, (2049, 33)), (5, 4, 1, 64, (5, 64, 129, 700, 1100))):
        lens = torch.tensor(lengths, device=device, dtype=torch.int32)
        pages = triton.cdiv(max(lengths), PAGE)
        blocks = b * pages + 3
        kc = torch.randn(blocks, PAGE, nkv, d, device=device, dtype=half)
        vc = torch.randn_like(kc)
        table = torch.randperm(blocks, device=device)[: b * pages].view(b, pages).to(torch.int32)
        q = torch.randn(b, (nh + 2 * nkv) * d, device=device, dtype=half)[:, : nh * d].view(b, nh, d)  # strided rows
        att = PagedDecode(nh, nkv, d, device)
        for splits in sorted({1, 2, 7, MAX_SPLITS}):
            for tile in TILES[:2]:
                out = torch.full((b, nh * d), float("nan"), device=device, dtype=half)
                att.launch(q, kc, vc, table, lens, out, splits, tile)
                for i, n in enumerate(lengths):
                    slots = (table[i].long()[:, None] * PAGE + torch.arange(PAGE, device=device)).flatten()[:n]
                    k = kc.view(-1, nkv, d)[slots].float().repeat_interleave(nh // nkv, 1)   # [n, nh, d]
                    v = vc.view(-1, nkv, d)[slots].float().repeat_interleave(nh // nkv, 1)
                    p = torch.softmax(torch.einsum("hd,nhd->hn", q[i].float(), k) / math.sqrt(d), dim=-1)
                    ref = torch.einsum("hn,nhd->hd", p, v).reshape(-1)
                    errors["paged decode"] = max(errors.get("paged decode", 0), _rel(out[i], ref))
    for name, e in errors.items():
        say("  kernel check %-13s worst relative error %.2e" % (name, e), flush=True)
    return max(errors.values())
