// two_kernels.cu — the GPU check's CUDA program (tests/gpu/check_cupti.sh): 200 steps of
// two kernels (a "gemm-like" loop and an elementwise one) inside NVTX ranges named like
// PyTorch's (ProfilerStep#N, forward, backward, optimizer), no Argus code at all: Argus
// must find everything through CUDA_INJECTION64_PATH / NVTX_INJECTION64_PATH.
// Prints "steps=200 kernels=<n> step_ms=<mean>".
// Usage: two_kernels [steps [behind]]: with "behind" it synchronises only every 16 steps,
// so the host runs up to 16 steps ahead and the GPU runs its steps' kernels steps later
// (the check that kernels go to the step that launched them).
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

__global__ void spin(float *x, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    for (int k = 0; k < iters; k++)
        v = v * 0.999f + 0.001f;
    x[i] = v;
}

__global__ void axpy(float *x, const float *y, float a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    x[i] += a * y[i];
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 200;
    int every = argc > 2 && argv[2][0] == 'b' ? 16 : 1;
    const int n = 1 << 20;
    float *x, *y;
    long kernels = 0;
    cudaError_t e = cudaMalloc(&x, n * sizeof *x);
    if (e == cudaSuccess)
        e = cudaMalloc(&y, n * sizeof *y);
    if (e != cudaSuccess) {
        fprintf(stderr, "two_kernels: %s\n", cudaGetErrorString(e));
        return 1;
    }
    cudaMemset(x, 0, n * sizeof *x);
    cudaMemset(y, 0, n * sizeof *y);
    auto t0 = std::chrono::steady_clock::now();
    for (int s = 0; s < steps; s++) {
        char name[32];
        snprintf(name, sizeof name, "ProfilerStep#%d", s);
        nvtxRangePushA(name);
        nvtxRangePushA("## forward ##");
        for (int l = 0; l < 8; l++, kernels++)
            spin<<<n / 256, 256>>>(x, 200 + 100 * (l % 2));
        nvtxRangePop();
        nvtxRangePushA("## backward ##");
        for (int l = 0; l < 8; l++, kernels++)
            spin<<<n / 256, 256>>>(x, 400);
        nvtxRangePop();
        nvtxRangePushA("Optimizer.step#SGD.step");
        axpy<<<n / 256, 256>>>(x, y, 0.1f);
        kernels++;
        nvtxRangePop();
        if ((s + 1) % every == 0)
            cudaDeviceSynchronize(); // like loss.item()
        nvtxRangePop();
    }
    cudaDeviceSynchronize();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    printf("steps=%d kernels=%ld step_ms=%.4f\n", steps, kernels, ms / steps);
    cudaFree(x);
    cudaFree(y);
    return 0;
}
