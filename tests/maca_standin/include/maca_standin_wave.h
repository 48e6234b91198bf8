/* Pre-included by the stand-in's MCRTC into every program: MACA's wave functions take 64-bit lane masks
   and __ballot_sync returns a 64-bit mask (a wave has up to 64 lanes). On the NVIDIA GPU under the stand-in
   a wave has 32 lanes, so these forward to CUDA's functions with the mask's low 32 bits. A 32-bit mask
   still reaches CUDA's own overloads, as it would reach MACA's (widened). */
#pragma once

template <typename T>
__device__ __forceinline__ T __shfl_sync(unsigned long long mask, T value, int lane, int width = warpSize) {
  return __shfl_sync(static_cast<unsigned>(mask), value, lane, width);
}
template <typename T>
__device__ __forceinline__ T __shfl_up_sync(unsigned long long mask, T value, unsigned int delta, int width = warpSize) {
  return __shfl_up_sync(static_cast<unsigned>(mask), value, delta, width);
}
template <typename T>
__device__ __forceinline__ T __shfl_down_sync(unsigned long long mask, T value, unsigned int delta, int width = warpSize) {
  return __shfl_down_sync(static_cast<unsigned>(mask), value, delta, width);
}
template <typename T>
__device__ __forceinline__ T __shfl_xor_sync(unsigned long long mask, T value, int lane_mask, int width = warpSize) {
  return __shfl_xor_sync(static_cast<unsigned>(mask), value, lane_mask, width);
}
__device__ __forceinline__ unsigned long long __ballot_sync(unsigned long long mask, int predicate) {
  return __ballot_sync(static_cast<unsigned>(mask), predicate);
}
__device__ __forceinline__ int __any_sync(unsigned long long mask, int predicate) {
  return __any_sync(static_cast<unsigned>(mask), predicate);
}
__device__ __forceinline__ int __all_sync(unsigned long long mask, int predicate) {
  return __all_sync(static_cast<unsigned>(mask), predicate);
}
