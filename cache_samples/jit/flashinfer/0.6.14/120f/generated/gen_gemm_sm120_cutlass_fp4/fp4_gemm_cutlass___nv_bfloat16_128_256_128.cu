// tiletune constructed sample: stands for the TU FlashInfer renders for CTA 128x256x128, output __nv_bfloat16
