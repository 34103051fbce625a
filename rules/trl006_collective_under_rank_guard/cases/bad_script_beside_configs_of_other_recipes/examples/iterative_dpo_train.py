"""The project's DPO recipe (configs/iterative_dpo.yaml names its ZeRO-3 accelerate config)."""


def main():
    print("iterative DPO")


if __name__ == "__main__":
    main()
