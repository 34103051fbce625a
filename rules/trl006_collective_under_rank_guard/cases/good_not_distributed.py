"""Single-process code: names alike, but no accelerate, torch.distributed or DeepSpeed in sight."""


def barrier():
    pass


def gather(values):
    return list(values)


class Runner:
    is_main_process = True

    def run(self, rank, values):
        if self.is_main_process:
            values = gather(values)
        if rank == 0:
            barrier()
        return values
