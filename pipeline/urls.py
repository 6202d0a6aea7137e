from django.urls import path

from . import views

app_name = "pipeline"

urlpatterns = [
    path("topology/", views.topology, name="topology"),
    path("topology/probe/", views.topology_probe, name="topology_probe"),
    path("topology/discover/", views.topology_discover, name="topology_discover"),
]
