# safetensors tests
