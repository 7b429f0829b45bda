// tiletune constructed sample: stands for the TU FlashInfer renders for CTA 128x32x128, output half
