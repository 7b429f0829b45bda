// tiletune constructed sample: stands for the TU FlashInfer renders for CTA 128x32x256, output __nv_bfloat16
