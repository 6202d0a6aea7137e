from django.core.management.base import BaseCommand

from pipeline.topology.switch import topology_use_embedded


class Command(BaseCommand):
    help = ("Go back to the embedded model: disable every other model server (nothing is deleted) and give the "
            "embedded server every role; the next `make run` starts it. Prints what changed.")

    def handle(self, *args, **options) -> None:
        changed = topology_use_embedded()
        for name in changed["disabled"]:
            self.stdout.write(f"disabled server {name}")
        for line in changed["roles"]:
            self.stdout.write(f"role {line}")
        if not changed["disabled"] and not changed["roles"]:
            self.stdout.write("Nothing to change: no model server other than the embedded one is enabled.")
        else:
            self.stdout.write("The embedded model holds every role once `make run` starts it.")
