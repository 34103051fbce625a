from .dist_utils import get_all_reduce_mean, get_world_size, reduce_value
