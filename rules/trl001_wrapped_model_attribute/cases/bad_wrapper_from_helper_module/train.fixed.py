import torch
from torch import nn
from torchvision.models import resnet50

from dist_utils import init_distributed, wrap_model


class SegmentationNet(nn.Module):
    def __init__(self, num_classes=21):
        super().__init__()
        self.num_classes = num_classes
        self.backbone = nn.Sequential(*list(resnet50(weights="DEFAULT").children())[:-2])
        self.head = nn.Conv2d(2048, num_classes, 1)

    def forward(self, images):
        return nn.functional.interpolate(self.head(self.backbone(images)), size=images.shape[-2:], mode="bilinear")


def main():
    local_rank = init_distributed()
    model = wrap_model(SegmentationNet(), local_rank)
    # expect: TRL001
    backbone_params = [p for p in model.module.backbone.parameters() if p.requires_grad]
    # expect: TRL001
    head_params = list(model.module.head.parameters())
    optimizer = torch.optim.SGD(
        [{"params": backbone_params, "lr": 1e-3}, {"params": head_params, "lr": 1e-2}], momentum=0.9
    )
    for step in range(1000):
        images = torch.randn(4, 3, 256, 256, device=local_rank)
        # expect: TRL001
        target = torch.randint(0, model.module.num_classes, (4, 256, 256), device=local_rank)
        loss = nn.functional.cross_entropy(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
