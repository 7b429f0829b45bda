// tiletune constructed sample: stands for the TU FlashInfer renders for CTA 128x64x256, output __nv_bfloat16
