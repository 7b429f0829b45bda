// tiletune constructed sample: stands for the TU FlashInfer renders for CTA 128x128x128, output half
