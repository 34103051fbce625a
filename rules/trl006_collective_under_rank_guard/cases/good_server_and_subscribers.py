# Rank 0 serves requests; the other ranks wait in a subscriber loop on a broadcast. The matching
# broadcast is sent by the server's request callbacks on rank 0, code this file hands to a library
# server the linter cannot read: the other ranks may well meet their broadcast. Unknown is silent.
import torch
import torch.distributed as dist

from my_project.serving import InferenceServer

SERVE, STOP = 0, 1


class RewardModelServer:
    def __init__(self, model, port: int):
        self.model = model
        self.port = port

    def infer(self, batch):
        command = torch.tensor([SERVE], device="cuda")
        dist.broadcast(command, 0)
        return self.model(batch)

    def run_subscriber_loop(self):
        while True:
            command = torch.tensor([0], device="cuda")
            dist.broadcast(command, 0)
            if command.item() == STOP:
                return
            self.model(None)

    def run_server(self):
        if dist.get_rank() == 0:
            server = InferenceServer(port=self.port, infer=self.infer)
            server.serve()
        else:
            self.run_subscriber_loop()
