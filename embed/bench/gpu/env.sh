# Sourced by the device runs: the ONNX Runtime GPU libraries and CUDA 13 / cuDNN 9 on the loader path.
export KAIROS_ORT_CUDA_LIB=/tmp/ort/libonnxruntime_providers_cuda.so
export KAIROS_ORT_LIB=/tmp/ort/libonnxruntime.so
LIBS=/usr/local/cuda-13.0/targets/x86_64-linux/lib:/usr/lib/x86_64-linux-gnu
for so in libcudnn.so.9 libcublasLt.so.13 libcufft.so.12 libcurand.so.10 libcudart.so.13; do
  d=$(ldconfig -p | awk -v s="$so" '$1==s {print $NF; exit}')
  [ -z "$d" ] && d=$(find / -name "$so" -not -path '/proc/*' 2>/dev/null | head -1)
  [ -n "$d" ] && LIBS="$LIBS:$(dirname "$d")"
done
export LD_LIBRARY_PATH=$LIBS
