// tiletune constructed sample: stands for the TU FlashInfer renders for CTA 256x128x128, output half
