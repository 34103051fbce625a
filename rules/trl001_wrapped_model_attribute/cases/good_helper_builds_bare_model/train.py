import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torchvision.models import resnet50

from dist_utils import build_model, init_distributed, wrap_model


class SegmentationNet(nn.Module):
    def __init__(self, num_classes=21):
        super().__init__()
        self.num_classes = num_classes
        self.backbone = nn.Sequential(*list(resnet50(weights="DEFAULT").children())[:-2])
        self.head = nn.Conv2d(2048, num_classes, 1)

    def forward(self, images):
        return nn.functional.interpolate(self.head(self.backbone(images)), size=images.shape[-2:], mode="bilinear")


def evaluate(local_rank):
    # The helper that does not wrap: the model answers its own attributes.
    model = build_model(SegmentationNet(), local_rank).eval()
    print("classes", model.num_classes, "backbone", model.backbone[0])


def main():
    local_rank = init_distributed()
    model = wrap_model(SegmentationNet(), local_rank)
    # Through .module, and the wrapper's own members.
    backbone_params = list(model.module.backbone.parameters())
    head_params = list(model.module.head.parameters())
    optimizer = torch.optim.SGD([{"params": backbone_params, "lr": 1e-3}, {"params": head_params}], lr=1e-2)
    model.train()
    for step in range(1000):
        images = torch.randn(4, 3, 256, 256, device=local_rank)
        target = torch.randint(0, model.module.num_classes, (4, 256, 256), device=local_rank)
        loss = nn.functional.cross_entropy(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if isinstance(model, DistributedDataParallel):
        model = model.module
    torch.save({"state": model.state_dict(), "classes": model.num_classes}, "seg.pt")
    evaluate(local_rank)


if __name__ == "__main__":
    main()
